// Per-request logging: every line of a request carries its id as `request_id` (docs/api.md), and each
// answered request gets one access line.
import {
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'

/** One line per request, when it is answered, carrying the request id. */
export class AccessLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' })
  }

  override incomingRequest(): void {}

  override requestCompleted(
    _error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    // The root logger with the id as a field, so that a request that logs nothing else never makes its child.
    request.server.log.info(
      {
        request_id: request.id,
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        duration_ms: reply.elapsedTime,
      },
      'request completed',
    )
  }
}

/**
 * Fastify's childLoggerFactory. Fastify gives every request a child logger carrying its id, and pino's child()
 * serialises the bindings each time, though most requests log nothing but their access line. Making the
 * child on the request's first line gave 4% and 7% more small /invoke requests a second in two same-run
 * A/Bs (docs/benchmarks/invoke.md).
 */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => new LazyChild(logger, bindings, options)

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

class LazyChild implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #made: FastifyBaseLogger | undefined

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get level(): string {
    return this.#made?.level ?? this.#options.level ?? this.#parent.level
  }

  set level(level: string) {
    this.#child().level = level
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args)
  }
  error(...args: unknown[]): void {
    this.#log('error', args)
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args)
  }
  info(...args: unknown[]): void {
    this.#log('info', args)
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args)
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args)
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#child().child(bindings, options)
  }

  #child(): FastifyBaseLogger {
    this.#made ??= this.#parent.child(this.#bindings, this.#options)
    return this.#made
  }

  #log(level: Level, args: unknown[]): void {
    const child = this.#child()
    ;(child[level] as (...args: unknown[]) => void).apply(child, args)
  }
}

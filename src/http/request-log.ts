// Per-request logging: every line of a request carries its id as `request_id` (docs/api.md), and each
// answered request gets one access line.
import { hostname } from 'node:os'
import {
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify'
import pino, { type Bindings, type ChildLoggerOptions } from 'pino'

/** Where whole log lines are written. */
export interface LineSink {
  write(line: string): void
}

/** For a level that leaves info lines out: no access line is made. */
const NO_LINES: LineSink = { write() {} }

/**
 * One line per request, when it is answered, carrying the request id. With a `sink` (the logger's own
 * stream, see accessSink) the line is written there as pino would write it, rather than through pino, whose
 * serialisation of any object made each small /invoke cost about 4% more (median of five A/Bs,
 * BENCHMARKS.md).
 */
export class AccessLog extends LogController {
  readonly #sink: LineSink | null

  constructor(sink: LineSink | null = null) {
    super({ requestIdLogLabel: 'request_id' })
    this.#sink = sink
  }

  override incomingRequest(): void {}

  override requestCompleted(
    _error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.#sink === NO_LINES) return
    if (this.#sink !== null) {
      const { id, method, url } = request
      this.#sink.write(accessLine(id, method, url, reply.statusCode, reply.elapsedTime, Date.now()))
      return
    }
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
 * Where the access lines can go around pino: the stream of a logger given as pino options that set nothing
 * but its level and stream (so its lines have pino's default fields), or nowhere when that level leaves
 * info lines out; null for any other logger.
 */
export function accessSink(logger: FastifyServerOptions['logger']): LineSink | null {
  if (typeof logger !== 'object' || logger === null) return null
  const { level = 'info', stream, ...rest } = logger as { level?: string; stream?: Partial<LineSink> }
  if (Object.keys(rest).length > 0 || typeof stream?.write !== 'function') return null
  const levelValue = pino.levels.values[level] ?? Number.POSITIVE_INFINITY
  return levelValue <= (pino.levels.values.info as number) ? (stream as LineSink) : NO_LINES
}

// pino's default `base`, as it serialises it.
const BASE = `"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`

/**
 * The access line, byte for byte as pino at its defaults writes it at `now` (test/http/request-log.test.ts).
 */
export function accessLine(
  id: string,
  method: string,
  url: string,
  status: number,
  durationMs: number,
  now: number,
): string {
  return `{"level":30,"time":${now},${BASE},"request_id":${JSON.stringify(id)},"method":${JSON.stringify(method)},"url":${JSON.stringify(url)},"status":${status},"duration_ms":${durationMs},"msg":"request completed"}\n`
}

/**
 * Fastify's childLoggerFactory. Fastify gives every request a child logger carrying its id, and pino's
 * child() serialises the bindings each time, though most requests log nothing but their access line. Making
 * the child on the request's first line gave 4% and 7% more small /invoke requests a second in two same-run
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

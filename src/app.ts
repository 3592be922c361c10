// Builds the Fastify app from a config and its dependencies. It never listens: main.ts does, and tests
// listen on port 0.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify'
import type { Algorithm } from './algorithms/algorithm.js'
import { algorithms as registry } from './algorithms/registry.js'
import type { Config } from './config.js'
import { frameworkErrorHandler, registerErrorHandlers } from './error-handler.js'
import type { Executor } from './executor.js'
import { registerBodyParsers } from './json-body.js'
import { type Metrics, UNMATCHED_ENDPOINT } from './metrics.js'
import { docsRoutes, registerOpenApi } from './routes/docs.js'
import { healthRoutes } from './routes/health.js'
import { invokeRoutes } from './routes/invoke.js'
import { jobRoutes } from './routes/jobs.js'
import { metricsRoutes } from './routes/metrics.js'
import { sharedSchemas } from './schemas.js'
import { validatorCompiler } from './validation.js'

export interface AppDependencies {
  executor: Executor
  /** The algorithms served, by name; the registry unless a test brings its own. */
  algorithms?: ReadonlyMap<string, Algorithm>
  metrics: Metrics
  /** True from the moment a shutdown begins; /readyz then answers 503. */
  isShuttingDown: () => boolean
  /** Pino options or an instance; tests pass `false` or a stream of their own. */
  logger?: FastifyServerOptions['logger']
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The client's x-request-id when it is well formed, otherwise a fresh UUID v4. */
function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
}

export async function buildApp(config: Config, deps: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel },
    genReqId: requestId,
    logController: new AccessLog(),
    bodyLimit: config.maxBodyBytes,
    // During a shutdown, requests on open connections are still answered in our own shapes.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
  })

  app.setValidatorCompiler(validatorCompiler(sharedSchemas))
  for (const schema of sharedSchemas) app.addSchema(schema)
  registerBodyParsers(app)
  registerErrorHandlers(app, config.maxBodyBytes)
  observeRequests(app, deps)
  await registerOpenApi(app)

  const algorithms = deps.algorithms ?? registry
  const primeChecker = algorithms.get('PrimeChecker')
  if (primeChecker === undefined) throw new Error('PrimeChecker is not registered')
  await app.register(invokeRoutes, {
    algorithm: primeChecker,
    executor: deps.executor,
    maxDigits: config.maxDigits,
    factorBudgetMs: config.invokeFactorBudgetMs,
  })
  await app.register(jobRoutes, { algorithms, maxDigits: config.maxDigits })
  await app.register(healthRoutes, {
    checks: { algorithm: () => deps.executor.alive },
    isShuttingDown: deps.isShuttingDown,
  })
  await app.register(metricsRoutes, { metrics: deps.metrics })
  await app.register(docsRoutes)
  return app
}

/** One log line per request, when it is answered, carrying the request id. */
class AccessLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' })
  }

  override incomingRequest(): void {}

  override requestCompleted(
    _error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    request.log.info(
      { method: request.method, url: request.url, status: reply.statusCode, duration_ms: reply.elapsedTime },
      'request completed',
    )
  }
}

/** Request id header and HTTP metrics. */
function observeRequests(app: FastifyInstance, deps: AppDependencies): void {
  const { httpRequests, httpDuration, httpInProgress } = deps.metrics
  // Label lookups hash their labels; the few children there are are kept at hand instead.
  const counters = new Map<string, ReturnType<typeof httpRequests.labels>>()
  const histograms = new Map<string, ReturnType<typeof httpDuration.labels>>()

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    httpInProgress.inc()
    reply.raw.once('close', () => httpInProgress.dec())
    done()
  })

  // During a shutdown every answer closes its connection, so kept-alive clients reconnect (perhaps to
  // another instance) and the server can finish closing.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (deps.isShuttingDown()) reply.header('connection', 'close')
    done(null, payload)
  })

  app.addHook('onResponse', (request, reply, done) => {
    const endpoint = request.routeOptions.url?.replace(/:([^/]+)/g, '{$1}') ?? UNMATCHED_ENDPOINT
    const route = `${request.method} ${endpoint}`
    const key = `${route} ${reply.statusCode}`
    let counter = counters.get(key)
    if (counter === undefined) {
      counter = httpRequests.labels({ method: request.method, endpoint, status: reply.statusCode })
      counters.set(key, counter)
    }
    let histogram = histograms.get(route)
    if (histogram === undefined) {
      histogram = httpDuration.labels({ method: request.method, endpoint })
      histograms.set(route, histogram)
    }
    counter.inc()
    histogram.observe(reply.elapsedTime / 1000)
    done()
  })
}

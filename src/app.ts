// Builds the Fastify app from a config and its dependencies. It never listens: main.ts does, and tests
// listen on port 0.
import Fastify, { type FastifyInstance } from 'fastify'
import type { Registry } from './algorithms/registry.js'
import type { ReloadOutcome } from './algorithms/reload.js'
import { defaultBounds, largestBounds } from './algorithms/request-bounds.js'
import { VersionPolicy } from './algorithms/version-policy.js'
import type { Config } from './config.js'
import type { Executor } from './execution/executor.js'
import { algorithmSchemas } from './http/algorithm-schemas.js'
import { acceptedKeyHashes, keyRequired, requireApiKeys } from './http/api-keys.js'
import { bodyBounds } from './http/body-bounds.js'
import { limitBufferedBodies } from './http/body-budget.js'
import { clientErrorHandler, expectationFailed } from './http/client-errors.js'
import { registerCors } from './http/cors.js'
import { type FrameworkErrorHandler, registerErrorHandlers } from './http/error-handler.js'
import { endpointObserver, observeRequests, requestId } from './http/http-observer.js'
import { registerBodyParsers } from './http/json-body.js'
import { lazySerializers } from './http/lazy-serializers.js'
import { registerRateLimit } from './http/rate-limit.js'
import { AccessLog, lazyRequestLogger } from './http/request-log.js'
import { RouteDeclarations } from './http/route-declaration.js'
import { sharedSchemas } from './http/schemas.js'
import { validatorCompiler } from './http/validation.js'
import { registerVersionPolicy } from './http/version-headers.js'
import type { JobBackend } from './jobs/backend.js'
import { type ProcessLogger, processLogger } from './logging/process-logger.js'
import { createMetrics, type Metrics, UNMATCHED_ENDPOINT } from './metrics/metrics.js'
import { adminRoutes } from './routes/admin.js'
import { algorithmRoutes } from './routes/algorithms.js'
import { dashboardRoutes } from './routes/dashboard.js'
import { type DocumentOf, docsRoutes, type RefreshDocument, registerOpenApi } from './routes/docs.js'
import { healthRoutes } from './routes/health.js'
import { invokeRoutes } from './routes/invoke.js'
import { jobControlRoutes } from './routes/job-control.js'
import { jobEventRoutes } from './routes/job-events.js'
import { jobsRoutes } from './routes/jobs.js'
import { metricsRoutes } from './routes/metrics.js'

export interface AppDependencies {
  executor: Executor
  /** The algorithms served, by name (the built-in modules and ALGOSERVE_ALGORITHMS's). */
  algorithms: Registry
  /** Which versions are deprecated; default, none. */
  versions?: VersionPolicy
  /** The algorithms whose jobs this process takes (ALGOSERVE_WORKER_ALGORITHMS); default, all. */
  jobAlgorithms?: readonly string[]
  metrics: Metrics
  /** The job backend, open; closed by its owner after the app. */
  backend: JobBackend
  /** True from the moment a shutdown begins; /readyz then answers 503. */
  isShuttingDown: () => boolean
  /** Readiness checks besides the app's own. */
  checks?: Record<string, () => boolean>
  /** The process's logger, which the backend logs through too. Default: stdout at the config's level. */
  logger?: ProcessLogger
  /** Loads the algorithms again (POST /admin/reload, with API keys on). */
  reload?: (trigger: string) => Promise<ReloadOutcome>
}

interface BaseApp {
  app: FastifyInstance
  /** Brings the OpenAPI document up to date after a reload. */
  refreshDocument: RefreshDocument
  /** For plugins whose routes declare nothing themselves. */
  declarations: RouteDeclarations
  /** API keys are on (ALGOSERVE_API_KEYS, ALGOSERVE_API_KEYS_FILE). */
  keysOn: boolean
}

/** The Fastify instance with what every app of ours has: logging, body parsing, errors, metrics. */
async function baseApp(config: Config, deps: AppDependencies, documentOf?: DocumentOf): Promise<BaseApp> {
  // Requests refused before routing (a malformed URL) pass no hooks, so they are counted here.
  const countRefused = endpointObserver(deps.metrics, UNMATCHED_ENDPOINT)
  let refuse: FrameworkErrorHandler | undefined
  const logger = deps.logger ?? processLogger({ level: config.logLevel })
  const app: FastifyInstance = Fastify({
    loggerInstance: logger.log,
    genReqId: requestId,
    logController: new AccessLog(logger.access),
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: config.maxBodyBytes,
    // During a shutdown, requests on open connections are still answered in our own shapes.
    return503OnClosing: false,
    trustProxy: config.trustProxy,
    frameworkErrors: (error, request, reply) => {
      refuse?.(error, request, reply)
      countRefused(request, reply)
    },
    clientErrorHandler: clientErrorHandler(() => app.log),
    // Slow or stalled clients are cut (node:http checks these every second, as set below).
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      headersTimeout: Math.min(config.headersTimeoutMs, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
    },
    // A path parameter of any length reaches its route, which judges it by its schema.
    routerOptions: { maxParamLength: 65_536 },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
  })
  app.server.on('checkExpectation', expectationFailed)
  // First, so that every hook below reads the declaration of each route registered later.
  const declarations = new RouteDeclarations(app)
  registerVersionPolicy(app, deps.versions ?? new VersionPolicy())

  const shared = sharedSchemas(deps.algorithms)
  app.setValidatorCompiler(validatorCompiler(shared))
  for (const schema of shared) app.addSchema(schema)
  // A body is held from its declared length on, up to the largest an algorithm's route allows.
  limitBufferedBodies(
    app,
    config.maxBufferedBodyBytes,
    largestBounds(deps.algorithms.all(), config).maxBodyBytes,
  )
  registerBodyParsers(app, bodyBounds(defaultBounds(config), { settings: config }))
  refuse = registerErrorHandlers(app, config.maxBodyBytes)
  observeRequests(app, deps.metrics, deps.isShuttingDown)
  // Opt-in, in this order: CORS answers preflights, then the key is checked, then the client is counted.
  // A feature that is off adds no hook.
  const apiKeys = acceptedKeyHashes(config)
  const isKeyRequired = apiKeys.length > 0 ? keyRequired(config) : null
  if (config.corsOrigins.length > 0) await registerCors(app, declarations, config.corsOrigins)
  if (isKeyRequired !== null) requireApiKeys(app, apiKeys, isKeyRequired)
  if (config.rateLimit > 0) await registerRateLimit(app, config)
  const refreshDocument = await registerOpenApi(
    app,
    {
      algorithms: deps.algorithms,
      keyRequired: isKeyRequired,
      rateLimit: config.rateLimit > 0 ? config : null,
      text: documentText(config),
    },
    documentOf,
  )
  return { app, refreshDocument, declarations, keysOn: isKeyRequired !== null }
}

export async function buildApp(config: Config, deps: AppDependencies): Promise<FastifyInstance> {
  // The document of the same app for another set of algorithms: built, read and closed, never listening,
  // with metrics of its own so that nothing it registers reaches this process's.
  const documentOf: DocumentOf = async (algorithms) => {
    const other = await buildApp(config, { ...deps, algorithms, metrics: createMetrics() })
    try {
      await other.ready()
      return other.swagger() as Record<string, unknown>
    } finally {
      await other.close()
    }
  }
  const { app, refreshDocument, declarations, keysOn } = await baseApp(config, deps, documentOf)
  const { algorithms } = deps
  for (const schema of algorithmSchemas(algorithms)) app.addSchema(schema)
  await app.register(algorithmRoutes, {
    algorithms,
    executor: deps.executor,
    bounds: config,
    factorBudgetMs: config.invokeFactorBudgetMs,
    timeoutMs: config.invokeTimeoutMs,
    workers: () => deps.backend.workers(),
    versionWorkers: () => deps.backend.versionWorkers(),
  })
  await app.register(invokeRoutes, {
    algorithms,
    executor: deps.executor,
    bounds: config,
    factorBudgetMs: config.invokeFactorBudgetMs,
    timeoutMs: config.invokeTimeoutMs,
  })
  await app.register(jobsRoutes, {
    algorithms,
    backend: deps.backend,
    metrics: deps.metrics,
    bounds: config,
    webhookAllowPrivate: config.webhookAllowPrivate,
    maxJobWaiters: config.maxJobWaiters,
  })
  await app.register(jobControlRoutes, { backend: deps.backend, metrics: deps.metrics })
  await app.register(jobEventRoutes, { backend: deps.backend, maxStreams: config.maxEventStreams })
  await registerStatusRoutes(app, deps)
  if (keysOn && deps.reload !== undefined) await app.register(adminRoutes, { reload: deps.reload })
  await app.register(docsRoutes, { declarations, text: documentText(config), refreshDocument })
  await app.register(dashboardRoutes)
  return app
}

const documentText = (config: Config) => ({
  title: config.apiTitle,
  version: config.apiVersion,
  description: config.apiDescription,
})

/** The app of `algoserve worker`: liveness, readiness and metrics only. */
export async function buildWorkerApp(config: Config, deps: AppDependencies): Promise<FastifyInstance> {
  const { app } = await baseApp(config, deps)
  await registerStatusRoutes(app, deps, [...(deps.jobAlgorithms ?? deps.algorithms.names())].sort())
  return app
}

async function registerStatusRoutes(
  app: FastifyInstance,
  deps: AppDependencies,
  algorithms?: string[],
): Promise<void> {
  await app.register(healthRoutes, {
    algorithms,
    checks: () => {
      const { algorithm, ...processes } = deps.executor.checks()
      return { algorithm, store: () => deps.backend.ping(), ...processes, ...deps.checks }
    },
    isShuttingDown: deps.isShuttingDown,
    metrics: deps.metrics,
  })
  await app.register(metricsRoutes, { metrics: deps.metrics })
}

// Wires the parts of one process together: the worker pool, the job backend (embedded SQLite, or Redis
// with a Redis URL), the consumers that run jobs and send webhooks, and the HTTP app; and takes them down
// in order at a shutdown. `serve` is the API (and, embedded or with ALGOSERVE_RUN_JOBS, runs jobs too);
// `worker` only runs jobs and webhooks from Redis, with a small app of its own (/healthz, /readyz,
// /metrics). main.ts runs it; tests start the same thing on port 0.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { RequestBounds } from './algorithms/algorithm.js'
import { moduleFiles } from './algorithms/loader.js'
import { loadRegistry, type Registry } from './algorithms/registry.js'
import { Reloader, type ReloadOutcome } from './algorithms/reload.js'
import { checkDeclaredBounds, checkReadBounds, largestBounds } from './algorithms/request-bounds.js'
import { VersionPolicy } from './algorithms/version-policy.js'
import { buildApp, buildWorkerApp } from './app.js'
import { threadsOfOne } from './cluster/share.js'
import type { Config } from './config.js'
import { ConfigError } from './errors.js'
import { Executor } from './execution/executor.js'
import { recordOwner } from './execution/process-owner.js'
import { ProcessPoolSet } from './execution/process-pool.js'
import { unionBounds } from './http/body-bounds.js'
import type { Consumer, JobBackend, JobEndStatus } from './jobs/backend.js'
import { openEmbeddedBackend } from './jobs/embedded/backend.js'
import { createRunJob } from './jobs/execute.js'
import { jobEndLog } from './jobs/job-end.js'
import { followVersions } from './jobs/loaded-versions.js'
import { JobSweeper } from './jobs/sweeper.js'
import { type LoggerSettings, processLogger } from './logging/process-logger.js'
import { createMetrics, type Metrics } from './metrics/metrics.js'
import { VERSION } from './version.js'
import { RETRY_WAITS_MS } from './webhooks/policy.js'
import { ReceiverPace } from './webhooks/receiver-pace.js'
import { type Resolver, WebhookSender } from './webhooks/sender.js'

const USER_AGENT = `algoserve/${VERSION}`
/**
 * Attempts in flight, or waiting for their receiver's slot, in one process: four times the largest
 * per-receiver cap, so that one receiver that hangs (its slots and as many waiting) holds at most half.
 */
const MAX_DELIVERIES_IN_FLIGHT = 1024

export { SHUTDOWN_MARGIN_MS } from './shutdown-margin.js'

export type Role = 'serve' | 'worker'

export interface ServiceOptions {
  /** `serve` (the default) or `worker` (Redis only). */
  role?: Role
  /** The process's log; main.ts gives its asynchronous destination. Default: stdout, the config's level. */
  logger?: LoggerSettings
  /** Readiness checks besides the service's own (with several HTTP processes: that all of them serve). */
  checks?: Record<string, () => boolean>
  /**
   * The jobs, when another process keeps them: an HTTP process beside others with the embedded store asks
   * the primary, which keeps the store and runs the jobs (jobs/remote/). This process then runs none.
   */
  backend?: JobBackend
  /**
   * Called after POST /admin/reload reloaded this process: with several HTTP processes, the primary then
   * reloads every other, so that one request means for the service what it means for one process.
   */
  reloadedByRequest?: (trigger: string) => void
  /** For tests only: a shorter webhook schedule, and a resolver for names that only tests know. */
  webhooks?: { retryWaitsMs?: readonly number[]; timeoutMs?: number; resolve?: Resolver }
}

export interface Service {
  app: FastifyInstance
  /** The algorithms served, by name. */
  algorithms: Registry
  metrics: Metrics
  executor: Executor
  backend: JobBackend
  sweeper: JobSweeper
  /** Whether this process runs jobs and webhooks. */
  readonly runsJobs: boolean
  /** Jobs this process runs at once, when it runs jobs. */
  readonly jobConcurrency: number
  /** True from the moment a shutdown begins. */
  readonly shuttingDown: boolean
  /**
   * Loads ALGOSERVE_ALGORITHMS again and serves the new set (SIGHUP, POST /admin/reload, --watch); rejects
   * with why it was refused, the running set unchanged. `trigger` names the cause in the log.
   */
  reload(trigger: string): Promise<ReloadOutcome>
  /** Starts running jobs and sending webhooks, when this process does (listening is the caller's). */
  start(): void
  /**
   * Readiness turns 503 at once. For `drainDelayMs` the listener stays open, so that a load balancer
   * sees the 503 and stops sending before connections are refused; meanwhile every answer carries
   * `Connection: close` and idle keep-alive connections close at their timeout. Then no new work is
   * taken; HTTP requests in flight are answered, running jobs and webhook attempts get `graceMs` and
   * otherwise go back to the backend; then everything is closed.
   */
  shutdown(graceMs: number, drainDelayMs?: number): Promise<void>
}

/**
 * Jobs run at once when ALGOSERVE_JOB_CONCURRENCY is 0: more than the threads, so that while long runs
 * hold them, cheap jobs (run inline) and short ones (on the spare thread) still start; and at least a
 * full batch of runs for a thread (the executor's), so that short jobs go to the threads many at a time.
 */
export function defaultJobConcurrency(threads: number): number {
  return Math.max(32, 2 * threads)
}

/** The algorithms whose jobs this process takes: ALGOSERVE_WORKER_ALGORITHMS, or all it loaded. */
function servedAlgorithms(config: Config, algorithms: Registry): string[] {
  const unknown = config.workerAlgorithms.filter((name) => !algorithms.has(name))
  if (unknown.length > 0) {
    throw new ConfigError(
      `ALGOSERVE_WORKER_ALGORITHMS names ${unknown.join(', ')}, not loaded here; loaded: ${algorithms.names().join(', ')}.`,
    )
  }
  return config.workerAlgorithms.length > 0 ? [...new Set(config.workerAlgorithms)] : algorithms.names()
}

/**
 * The registry of these files, checked as the start and every reload check it: something to serve, bounds
 * within the operator's ceilings, and the algorithms a worker is told to take all there.
 */
async function loadAlgorithms(config: Config, role: Role, files: string[]): Promise<Registry> {
  const algorithms = await loadRegistry(files, {}, config.primeChecker, config.defaultVersions)
  if (algorithms.size === 0) {
    throw new ConfigError(
      'ALGOSERVE_PRIME_CHECKER=false leaves no algorithm to serve: name your modules in ALGOSERVE_ALGORITHMS.',
    )
  }
  checkDeclaredBounds(algorithms.all(), config)
  if (role === 'worker') servedAlgorithms(config, algorithms)
  return algorithms
}

/**
 * The bounds the routes built at the start read a name's bodies under: a name's own routes, the union of
 * its versions' bounds; a name the start did not have, through the parametric routes, the largest of all.
 */
function startReadBounds(config: Config, algorithms: Registry): (name: string) => RequestBounds {
  const largest = largestBounds(algorithms.all(), config)
  const byName = new Map(
    algorithms.names().map((name) => [name, unionBounds(algorithms.versions(name), config)]),
  )
  return (name) => byName.get(name) ?? largest
}

async function openBackend(
  config: Config,
  log: FastifyBaseLogger,
  metrics: Metrics,
  algorithms: Registry,
  options: ServiceOptions,
): Promise<JobBackend> {
  const common = {
    ttlMs: config.jobTtlSeconds * 1000,
    maxPending: config.maxPendingJobs,
    retryWaitsMs: options.webhooks?.retryWaitsMs ?? RETRY_WAITS_MS,
    countEnded: (algorithm: string, status: JobEndStatus, seconds: number) => {
      metrics.jobsCompleted.inc({ algorithm, status })
      metrics.jobDuration.labels({ algorithm }).observe(seconds)
    },
    log,
  }
  if (config.redisUrl === null) {
    const defaultVersion = (name: string) => algorithms.defaultOf(name)?.version
    return openEmbeddedBackend({ ...common, dataDir: config.dataDir, defaultVersion })
  }
  // Loaded only in distributed mode: BullMQ and ioredis cost the embedded mode start time and memory.
  const { RedisBackend } = await import('./jobs/redis/backend.js')
  // Every version loaded, by versionKey: the Redis queues of their jobs.
  const loadedVersions = followVersions(algorithms).keys
  const backend = new RedisBackend({
    ...common,
    url: config.redisUrl,
    clusterNodes: config.redisClusterNodes,
    sentinels: config.redisSentinels,
    sentinelName: config.redisSentinelName,
    tlsCaFile: config.redisTlsCaFile,
    minReplicas: config.redisMinReplicas,
    prefix: config.redisPrefix,
    lockMs: config.jobLockMs,
    versions: loadedVersions(),
  })
  // A reload's new versions are this process's queues too: their jobs are created and waited for here.
  algorithms.onChange(() => {
    backend
      .follow(loadedVersions())
      .catch((error: unknown) => log.warn({ err: error }, 'could not name the queues of reloaded versions'))
  })
  try {
    await backend.open()
  } catch (error) {
    await backend.close()
    throw error
  }
  return backend
}

export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const role = options.role ?? 'serve'
  if (role === 'worker' && config.redisUrl === null) {
    throw new ConfigError('algoserve worker runs jobs from Redis: set ALGOSERVE_REDIS_URL (or --redis-url).')
  }
  // Refused rather than ignored: whoever set it expected more of this worker than one process gives.
  if (role === 'worker' && config.httpProcesses > 1) {
    throw new ConfigError(
      'ALGOSERVE_HTTP_PROCESSES is a setting of algoserve serve; a worker is one process (to run more jobs, start more workers).',
    )
  }
  // Before anything starts: a module that breaks the contract stops the start here.
  const algorithmFiles = moduleFiles(config.algorithms)
  const algorithms = await loadAlgorithms(config, role, algorithmFiles)
  const served = servedAlgorithms(config, algorithms)
  const metrics = createMetrics()
  // A worker runs the jobs of its algorithms only: it starts their programs alone, and is ready without
  // the others'. The API answers calls to every algorithm.
  // HTTP processes of one `serve` divide the machine's threads and programs among them (cluster/share.ts).
  const sharedBy = role === 'serve' ? config.httpProcesses : 1
  const processes = new ProcessPoolSet(
    algorithms,
    { invokeQueueTimeoutMs: config.invokeQueueTimeoutMs, memoryMb: config.algorithmMemoryMb, sharedBy },
    role === 'worker' ? served : undefined,
  )
  const executor = new Executor(
    {
      threads: sharedBy > 1 ? threadsOfOne(config.workerThreads, sharedBy) : config.workerThreads,
      invokeQueueTimeoutMs: config.invokeQueueTimeoutMs,
      algorithmFiles,
      builtInAlgorithms: config.primeChecker,
      threadHeapMb: config.threadHeapMb,
      memoryMb: config.algorithmMemoryMb,
      processes,
    },
    metrics,
  )
  let shuttingDown = false
  // One logger for the process, made first: the backend logs through it from its opening on, and the app
  // is built on it.
  const logger = processLogger(options.logger ?? { level: config.logLevel })
  const { log } = logger
  const algorithmLog = log.child({ component: 'algorithms' })
  const readOf = startReadBounds(config, algorithms)
  const reloader = new Reloader(
    algorithms,
    {
      entries: config.algorithms,
      load: async (files) => {
        const next = await loadAlgorithms(config, role, files)
        if (role === 'serve') checkReadBounds(next.all(), readOf, config)
        return next
      },
    },
    algorithmLog,
  )
  const reload = (trigger: string) => reloader.reload(trigger)
  let backend: JobBackend | undefined
  let app: FastifyInstance
  try {
    backend =
      options.backend ??
      (await openBackend(config, log.child({ component: 'jobs' }), metrics, algorithms, options))
    const deps = {
      executor,
      metrics,
      backend,
      isShuttingDown: () => shuttingDown,
      logger,
      checks: options.checks,
      algorithms,
      versions: new VersionPolicy(config.deprecatedVersions),
      jobAlgorithms: served,
      reload: async (trigger: string) => {
        const outcome = await reload(trigger)
        options.reloadedByRequest?.(trigger)
        return outcome
      },
    }
    app = role === 'worker' ? await buildWorkerApp(config, deps) : await buildApp(config, deps)
    // A module that loads in the process but not in a thread stops the start here, not at a first run.
    await executor.warm()
  } catch (error) {
    await Promise.all([executor.close(), backend?.close()])
    throw error
  }
  const jobs: JobBackend = backend
  // What was derived from the set at start follows a reload: threads, process pools, the backend's consumers.
  algorithms.onChange((next) => {
    executor.algorithmsChanged(next)
    jobs.algorithmsChanged?.(next)
  })
  // What a predecessor that died left running is ended before this one starts its own.
  const forgetOwner = processes.any ? await recordOwner(config.dataDir, algorithmLog) : async () => {}
  processes.start(algorithmLog)
  // Jobs kept where only this process reaches them are run here, whatever the settings say.
  const runsJobs =
    options.backend === undefined && (role === 'worker' || !jobs.capabilities.shared || config.runJobs)
  metrics.countJobsWith(() => jobs.counts(), algorithms.names())
  const sender = new WebhookSender({
    userAgent: USER_AGENT,
    secret: config.webhookSecret,
    allowPrivate: config.webhookAllowPrivate,
    timeoutMs: options.webhooks?.timeoutMs,
    resolve: options.webhooks?.resolve,
    connectionsPerReceiver: config.webhookReceiverMaxInFlight,
  })
  const pace = new ReceiverPace(config.webhookReceiverMaxInFlight)
  metrics.showReceivers(() => pace.states())
  const runJob = createRunJob({
    executor,
    algorithms,
    factorBudgetMs: config.jobFactorBudgetMs,
    timeoutMs: config.jobTimeoutMs,
    maxDigits: config.maxDigits,
    log: log.child({ component: 'jobs' }),
  })
  const consumers: Consumer[] = []
  const jobConcurrency =
    config.jobConcurrency > 0 ? config.jobConcurrency : defaultJobConcurrency(executor.threads)
  const sweeper = new JobSweeper(
    jobs,
    log.child({ component: 'jobs' }),
    Math.min(60_000, config.jobTtlSeconds * 1000),
  )
  return {
    app,
    algorithms,
    metrics,
    executor,
    backend: jobs,
    sweeper,
    runsJobs,
    jobConcurrency,
    get shuttingDown() {
      return shuttingDown
    },
    reload,
    start() {
      if (!runsJobs || consumers.length > 0) return
      consumers.push(
        jobs.consumeJobs(runJob, {
          concurrency: jobConcurrency,
          algorithms: served,
          loaded: algorithms,
          logEnd: jobEndLog(
            log.child({ component: 'jobs' }),
            (name) => algorithms.defaultOf(name)?.version ?? null,
          ),
        }),
        jobs.consumeDeliveries((message, signal) => sender.send(message, signal), {
          maxInFlight: MAX_DELIVERIES_IN_FLIGHT,
          pace,
          onAttempt: (status) => metrics.webhookDeliveries.inc({ status }),
          log: log.child({ component: 'webhooks' }),
        }),
      )
    },
    async shutdown(graceMs: number, drainDelayMs = 0) {
      if (shuttingDown) return
      shuttingDown = true
      // Not closed now: a kept-alive connection idle at this instant may be carrying the client's next
      // request already, which would be reset. Each answer from now on says Connection: close, and a
      // connection left idle closes at its keep-alive timeout, which clients are told of.
      if (drainDelayMs > 0) await sleep(drainDelayMs)
      sweeper.stop()
      const grace = setTimeout(() => app.server.closeAllConnections(), graceMs)
      // A connection whose request was in flight is idle only once it is answered; close those too.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 100)
      await Promise.all([app.close(), ...consumers.map((consumer) => consumer.stop(graceMs))])
      clearInterval(sweep)
      clearTimeout(grace)
      await Promise.all([executor.close(), sender.close()])
      await Promise.all([jobs.close(), forgetOwner()])
    },
  }
}

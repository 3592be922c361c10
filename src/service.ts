// Wires the parts of one serving process together: the worker pool, the job store, the job runner,
// the webhook dispatcher and the HTTP app; and takes them down in order at a shutdown. main.ts runs
// it; tests start the same thing on port 0.
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Algorithm } from './algorithms/algorithm.js'
import { registry } from './algorithms/registry.js'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { Executor } from './execution/executor.js'
import { JobRunner } from './jobs/runner.js'
import { SqliteJobStore } from './jobs/sqlite-store.js'
import type { JobStore } from './jobs/store.js'
import { JobSweeper } from './jobs/sweeper.js'
import { createMetrics, type Metrics } from './metrics/metrics.js'
import { VERSION } from './version.js'
import { WebhookDispatcher } from './webhooks/dispatcher.js'
import { webhookDelivery } from './webhooks/payload.js'
import { type Resolver, WebhookSender } from './webhooks/sender.js'

const USER_AGENT = `algoserve/${VERSION}`

export interface ServiceOptions {
  logger?: FastifyServerOptions['logger']
  algorithms?: ReadonlyMap<string, Algorithm>
  /** For tests only: a shorter webhook schedule, and a resolver for names that only tests know. */
  webhooks?: { retryWaitsMs?: readonly number[]; timeoutMs?: number; resolve?: Resolver }
}

export interface Service {
  app: FastifyInstance
  metrics: Metrics
  executor: Executor
  store: JobStore
  sweeper: JobSweeper
  /** True from the moment a shutdown begins. */
  readonly shuttingDown: boolean
  /** Starts running jobs and sending webhooks (listening is the caller's). */
  start(): void
  /**
   * Readiness turns 503 at once. For `drainDelayMs` the listener stays open, so that a load balancer
   * sees the 503 and stops sending before connections are refused; meanwhile every answer carries
   * `Connection: close` and idle keep-alive connections close at their timeout. Then no new work is taken; HTTP
   * requests in flight are answered, running jobs and webhook attempts get `graceMs` and otherwise go
   * back to the store; then everything is closed.
   */
  shutdown(graceMs: number, drainDelayMs?: number): Promise<void>
}

export async function createService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const algorithms = options.algorithms ?? registry
  const metrics = createMetrics()
  const store = SqliteJobStore.open({
    dataDir: config.dataDir,
    ttlMs: config.jobTtlSeconds * 1000,
    maxPending: config.maxPendingJobs,
    makeDelivery: webhookDelivery,
  })
  const executor = new Executor(
    { threads: config.workerThreads, invokeQueueTimeoutMs: config.invokeQueueTimeoutMs },
    metrics,
  )
  let shuttingDown = false
  let app: FastifyInstance
  try {
    app = await buildApp(config, {
      executor,
      algorithms,
      metrics,
      store,
      // The runner is made below, from the app's logger; nothing is created before the app listens.
      onJobCreated: () => runner.notify(),
      isShuttingDown: () => shuttingDown,
      logger: options.logger,
    })
  } catch (error) {
    await Promise.all([executor.close(), store.close()])
    throw error
  }
  const sender = new WebhookSender({
    userAgent: USER_AGENT,
    secret: config.webhookSecret,
    allowPrivate: config.webhookAllowPrivate,
    timeoutMs: options.webhooks?.timeoutMs,
    resolve: options.webhooks?.resolve,
  })
  const dispatcher = new WebhookDispatcher({
    store,
    sender,
    metrics,
    log: app.log.child({ component: 'webhooks' }),
    retryWaitsMs: options.webhooks?.retryWaitsMs,
  })
  const jobsLog = app.log.child({ component: 'jobs' })
  const runner = new JobRunner({
    store,
    executor,
    algorithms,
    metrics,
    log: jobsLog,
    concurrency: config.jobConcurrency > 0 ? config.jobConcurrency : executor.threads,
    factorBudgetMs: config.jobFactorBudgetMs,
    timeoutMs: config.jobTimeoutMs,
    maxDigits: config.maxDigits,
    onDeliveryScheduled: () => dispatcher.notify(),
  })
  const sweeper = new JobSweeper(store, jobsLog, Math.min(60_000, config.jobTtlSeconds * 1000))
  return {
    app,
    metrics,
    executor,
    store,
    sweeper,
    get shuttingDown() {
      return shuttingDown
    },
    start() {
      runner.start()
      dispatcher.start()
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
      await Promise.all([app.close(), runner.stop(graceMs), dispatcher.stop(graceMs)])
      clearInterval(sweep)
      clearTimeout(grace)
      await Promise.all([executor.close(), sender.close()])
      await store.close()
    },
  }
}

// The Redis backend: jobs and webhook deliveries in Redis through BullMQ, shared by any number of API
// and worker processes (design notes: /work/shared/design/distributed-mode.md). BullMQ is the engine:
// its Workers take jobs, hold their locks, find the runs of dead workers (the stalled checker), and
// retry deliveries on our schedule (a custom backoff). A job with a webhook is the child of its
// delivery in a flow, so BullMQ releases the delivery in the same step that ends the job.
import { once } from 'node:events'
import {
  FlowProducer,
  Job,
  type JobsOptions,
  Queue,
  UnrecoverableError,
  WaitingError,
  Worker,
  type WorkerOptions,
} from 'bullmq'
import type { FastifyBaseLogger } from 'fastify'
import { Redis } from 'ioredis'
import { RedisRefusedError, ShutdownAbort } from '../errors.js'
import { newWebhookId, webhookPayload } from '../webhooks/payload.js'
import { attemptStatus, decide, logDecision } from '../webhooks/policy.js'
import type {
  AttemptDelivery,
  ConsumeDeliveriesOptions,
  ConsumeJobsOptions,
  Consumer,
  JobBackend,
  JobCounts,
  RunJob,
} from './backend.js'
import { type RedisJobData, type RedisJobResult, recordOf } from './redis-view.js'
import {
  DuplicateJobIdError,
  type JobRecord,
  lostRunsError,
  MAX_LOST_RUNS,
  type NewJob,
  StoreFullError,
  StoreUnavailableError,
} from './store.js'

export interface RedisBackendOptions {
  url: string
  /** BullMQ's key prefix: every key of this deployment starts with it. */
  prefix: string
  ttlMs: number
  maxPending: number
  /** BullMQ's lockDuration and stalledInterval: a dead worker's job runs again within about twice this. */
  lockMs: number
  retryWaitsMs: readonly number[]
  log: FastifyBaseLogger
}

interface DeliveryData {
  jobId: string
  algorithm: string
  url: string
  webhookId: string
  /** Stored at the first attempt, so that every attempt sends the same body. */
  payload?: string
}

const JOBS = 'jobs'
const WEBHOOKS = 'webhooks'
const PENDING_STATES = ['waiting', 'prioritized', 'delayed'] as const
const CLEAN_BATCH = 1000
/** How long a stop waits, after the grace period, for work to be given back before closing anyway. */
const FORCE_CLOSE_AFTER_MS = 5000
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'])

/** Reconnect soon after an outage (BullMQ's default waits up to 20 s between tries). */
const retryStrategy = (times: number): number => Math.min(250 * times, 2000)

export class RedisBackend implements JobBackend {
  readonly kind = 'redis'
  readonly #o: RedisBackendOptions
  readonly #log: FastifyBaseLogger
  // The API's connection fails fast while Redis is away: no offline queue, one retry, a time limit.
  readonly #client: Redis
  readonly #jobs: Queue<RedisJobData, RedisJobResult>
  readonly #webhooks: Queue<DeliveryData>
  readonly #flows: FlowProducer
  #initialised = false
  #refused: string | null = null
  #checked: Promise<void> | undefined
  readonly #workerConnections: Redis[] = []
  readonly #workers: Worker[] = []

  constructor(options: RedisBackendOptions) {
    this.#o = options
    this.#log = options.log
    this.#client = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 2000,
      retryStrategy,
    })
    this.#client.on('error', (error) => this.#log.debug({ err: error }, 'redis connection error'))
    this.#client.on('ready', () => {
      this.#checked = this.#checkRedis()
    })
    const shared = { connection: this.#client, prefix: options.prefix }
    this.#jobs = new Queue(JOBS, shared)
    this.#webhooks = new Queue(WEBHOOKS, shared)
    this.#flows = new FlowProducer(shared)
    const onError = (error: Error) => this.#log.debug({ err: error }, 'redis queue error')
    this.#jobs.on('error', onError)
    this.#webhooks.on('error', onError)
    this.#flows.on('error', onError)
    // Until BullMQ has loaded its scripts, nothing is sent through it (see #usable).
    Promise.all([this.#jobs.waitUntilReady(), this.#webhooks.waitUntilReady(), this.#flows.waitUntilReady()])
      .then(() => {
        this.#initialised = true
      })
      .catch((error: unknown) => this.#log.error({ err: error }, 'could not set up the Redis queues'))
  }

  /**
   * Waits up to `waitMs` for Redis. Refuses (throws) a Redis that evicts keys; starts anyway when Redis
   * is away, answering 503 until it comes.
   */
  async open(waitMs = 1000): Promise<void> {
    if (this.#client.status !== 'ready') {
      const timer = new AbortController()
      await Promise.race([
        once(this.#client, 'ready', { signal: timer.signal }).catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, waitMs)),
      ])
      timer.abort()
    }
    await this.#checked
    if (this.#refused !== null) throw new RedisRefusedError(this.#refused)
    if (this.#client.status !== 'ready') {
      this.#log.warn('Redis cannot be reached: jobs answer 503 until it can')
    }
  }

  /** Checks the settings BullMQ relies on, at every (re)connection. */
  async #checkRedis(): Promise<void> {
    try {
      const info = await this.#client.info()
      const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1]
      if (policy !== undefined && policy !== 'noeviction') {
        this.#refused =
          `Redis evicts keys (maxmemory-policy ${policy}); BullMQ needs maxmemory-policy noeviction, ` +
          'or locks and jobs disappear. Set it in redis.conf or with CONFIG SET maxmemory-policy noeviction.'
        this.#log.error(this.#refused)
        return
      }
      this.#refused = null
      if (/^aof_enabled:0/m.test(info)) {
        this.#log.warn(
          'Redis has AOF off (appendonly no): a redis-server crash loses jobs since its last snapshot; ' +
            'set appendonly yes with appendfsync everysec',
        )
      }
    } catch (error) {
      this.#log.warn({ err: error }, 'could not read Redis INFO')
    }
  }

  /** Connected, set up and accepted: BullMQ may be called without waiting for a connection. */
  #usable(): void {
    if (this.#client.status !== 'ready' || !this.#initialised || this.#refused !== null) {
      throw new StoreUnavailableError('Redis is not connected.')
    }
  }

  #jobOptions(job: NewJob): JobsOptions {
    const age = Math.ceil(this.#o.ttlMs / 1000)
    return {
      jobId: job.id,
      timestamp: job.createdAt,
      // Runs on a thread that died are retried at once; the processor fails the job after
      // MAX_LOST_RUNS lost runs, of any kind, so BullMQ never gives up first.
      attempts: MAX_LOST_RUNS + 1,
      removeOnComplete: { age },
      removeOnFail: { age },
      stackTraceLimit: 0,
    }
  }

  async submit(job: NewJob): Promise<void> {
    this.#usable()
    const data: RedisJobData = { params: job.params, webhook: job.webhook, cheap: job.cheap }
    try {
      // BullMQ ignores an add with a taken id, and has no bounded queue: both are checked first, and
      // the bound is soft across API processes (README, Distributed mode).
      const [counts, existing] = await Promise.all([
        this.#jobs.getJobCounts(...PENDING_STATES),
        Job.fromId(this.#jobs, job.id),
      ])
      if (existing !== undefined) throw new DuplicateJobIdError(job.id)
      const pending = PENDING_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0)
      if (pending >= this.#o.maxPending)
        throw new StoreFullError(`${pending} jobs are waiting, the most allowed.`)
      if (job.webhook === null) {
        await this.#jobs.add(job.algorithm, data, this.#jobOptions(job))
        return
      }
      const age = Math.ceil(this.#o.ttlMs / 1000)
      const delivery: DeliveryData = {
        jobId: job.id,
        algorithm: job.algorithm,
        url: job.webhook,
        webhookId: newWebhookId(),
      }
      await this.#flows.add({
        name: 'deliver',
        queueName: WEBHOOKS,
        data: delivery,
        opts: {
          jobId: job.id,
          attempts: this.#o.retryWaitsMs.length + 1,
          backoff: { type: 'webhook' },
          removeOnComplete: { age },
          removeOnFail: { age },
          stackTraceLimit: 0,
        },
        children: [
          {
            name: job.algorithm,
            queueName: JOBS,
            data,
            opts: { ...this.#jobOptions(job), ignoreDependencyOnFailure: true },
          },
        ],
      })
    } catch (error) {
      if (error instanceof DuplicateJobIdError || error instanceof StoreFullError) throw error
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
  }

  async read(id: string, now: number): Promise<JobRecord | null> {
    this.#usable()
    try {
      const [job, state] = await Promise.all([Job.fromId(this.#jobs, id), this.#jobs.getJobState(id)])
      return recordOf(job, state, this.#o.ttlMs, now)
    } catch (error) {
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
  }

  async countPending(): Promise<number> {
    return (await this.counts()).waiting
  }

  async counts(): Promise<JobCounts> {
    this.#usable()
    try {
      const counts = await this.#jobs.getJobCounts(...PENDING_STATES, 'active')
      const waiting = PENDING_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0)
      return { waiting, running: counts.active ?? 0 }
    } catch (error) {
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
  }

  async ping(): Promise<boolean> {
    try {
      this.#usable()
      let timer: NodeJS.Timeout | undefined
      const answer = await Promise.race([
        this.#client.ping(),
        new Promise((resolve) => (timer = setTimeout(resolve, 1000, 'late'))),
      ])
      clearTimeout(timer)
      return answer === 'PONG'
    } catch {
      return false
    }
  }

  /** A Worker's own connection: it waits for Redis however long it is away (BullMQ's advice). */
  #workerConnection(): Redis {
    const connection = new Redis(this.#o.url, { maxRetriesPerRequest: null, retryStrategy })
    connection.on('error', (error) => this.#log.debug({ err: error }, 'redis worker connection error'))
    this.#workerConnections.push(connection)
    return connection
  }

  #worker<D, R>(
    queue: string,
    concurrency: number,
    process: (job: Job<D, R>, token: string | undefined, signal: AbortSignal) => Promise<R>,
    settings: Partial<WorkerOptions> = {},
  ): Worker<D, R> {
    const worker = new Worker<D, R>(
      queue,
      (job, token, signal) => process(job, token, signal as AbortSignal),
      {
        ...settings,
        connection: this.#workerConnection(),
        prefix: this.#o.prefix,
        concurrency,
        lockDuration: this.#o.lockMs,
        stalledInterval: this.#o.lockMs,
        maxStalledCount: MAX_LOST_RUNS,
      },
    )
    worker.on('error', (error) => {
      // While Redis is away every retry fails to connect: that is the readiness check's to tell.
      const level = CONNECTION_ERRORS.has((error as { code?: string }).code ?? '') ? 'debug' : 'warn'
      this.#log[level]({ err: error, queue }, 'redis worker error')
    })
    this.#workers.push(worker as Worker)
    return worker
  }

  consumeJobs(run: RunJob, options: ConsumeJobsOptions): Consumer {
    const shutdown = new AbortController()
    const worker = this.#worker<RedisJobData, RedisJobResult>(
      JOBS,
      options.concurrency,
      async (job, token, signal) => {
        // Runs lost to dead workers (stalls) and to dead threads (retries) count alike.
        const lost = job.stalledCounter + job.attemptsMade
        if (lost >= MAX_LOST_RUNS) throw new UnrecoverableError(lostRunsError(lost))
        const record = recordOf(job, 'active', this.#o.ttlMs, Date.now()) as JobRecord
        let outcome: Awaited<ReturnType<RunJob>>
        try {
          outcome = await run(record, AbortSignal.any([shutdown.signal, signal]))
        } catch (error) {
          if (error instanceof ShutdownAbort) {
            await job.moveToWait(token)
            throw new WaitingError()
          }
          this.#log.error(
            { err: error, job_id: job.id },
            'a job run was lost (its worker died); it runs again',
          )
          throw new Error('the worker thread running the job died')
        }
        if (outcome.status === 'failed') throw new UnrecoverableError(outcome.error)
        return [outcome.result, outcome.metadata]
      },
    )
    const ended = (job: Job, status: 'completed' | 'failed') => {
      const seconds = ((job.finishedOn ?? Date.now()) - (job.processedOn ?? Date.now())) / 1000
      options.onEnded(job.name, status, Math.max(0, seconds))
    }
    worker.on('completed', (job) => ended(job, 'completed'))
    worker.on('failed', (job) => {
      // Also emitted for a run that is retried; only a final failure has finishedOn.
      if (job?.finishedOn) ended(job, 'failed')
    })
    return bullConsumer(worker, shutdown)
  }

  consumeDeliveries(attempt: AttemptDelivery, options: ConsumeDeliveriesOptions): Consumer {
    const waits = this.#o.retryWaitsMs
    const shutdown = new AbortController()
    const worker = this.#worker<DeliveryData, void>(
      WEBHOOKS,
      options.maxInFlight,
      async (job, token, signal) => {
        let { payload } = job.data
        if (payload === undefined) {
          payload = await this.#payloadOf(job)
          await job.updateData({ ...job.data, payload })
        }
        const { jobId, url, webhookId } = job.data
        const result = await attempt(
          { id: webhookId, url, payload },
          AbortSignal.any([shutdown.signal, signal]),
        )
        const number = job.attemptsMade + 1
        const decision = decide(result, number, waits)
        const status = attemptStatus(decision)
        if (status !== null) options.onAttempt(status)
        logDecision(this.#log, { job_id: jobId, webhook_id: webhookId, attempt: number }, decision)
        switch (decision.kind) {
          case 'delivered':
            return
          case 'released':
            await job.moveToWait(token)
            throw new WaitingError()
          case 'failed':
            throw new UnrecoverableError(decision.error)
          case 'retry':
            throw new Error(decision.error)
        }
      },
      { settings: { backoffStrategy: (attemptsMade: number) => waits[attemptsMade - 1] ?? 0 } },
    )
    return bullConsumer(worker, shutdown)
  }

  /** The body of a delivery, from the job it reports on (ended: BullMQ released the delivery). */
  async #payloadOf(delivery: Job<DeliveryData>): Promise<string> {
    const { jobId, algorithm } = delivery.data
    const [job, state] = await Promise.all([Job.fromId(this.#jobs, jobId), this.#jobs.getJobState(jobId)])
    const record = recordOf(
      job as Job<RedisJobData, RedisJobResult> | undefined,
      state,
      Number.POSITIVE_INFINITY,
      0,
    )
    if (record?.completedAt != null) return webhookPayload(record, record.completedAt)
    // The job is gone already (no delivery worker ran for its whole retention): what the flow kept of
    // it; only completed_at is approximate.
    this.#log.warn(
      { job_id: jobId },
      'a webhook is sent for a job already removed; its completed_at is approximate',
    )
    const [values, failures] = await Promise.all([
      delivery.getChildrenValues(),
      delivery.getIgnoredChildrenFailures(),
    ])
    const value = Object.values(values)[0] as RedisJobResult | undefined
    const error = Object.values(failures)[0]
    const base = {
      ...(record ?? {}),
      id: jobId,
      algorithm,
      params: '{}',
      webhook: delivery.data.url,
      cheap: false,
    }
    const ended: JobRecord = {
      ...base,
      status: value === undefined ? 'failed' : 'completed',
      createdAt: 0,
      startedAt: null,
      completedAt: Date.now(),
      result: value?.[0] ?? null,
      metadata: value?.[1] ?? null,
      error: value === undefined ? (error ?? null) : null,
      runs: 0,
      lostRuns: 0,
    }
    return webhookPayload(ended, ended.completedAt as number)
  }

  /** BullMQ's own age-based removal runs only when another job ends; this removes the rest. */
  async expire(): Promise<number> {
    this.#usable()
    const grace = this.#o.ttlMs
    const [completed, failed] = await Promise.all([
      this.#jobs.clean(grace, CLEAN_BATCH, 'completed'),
      this.#jobs.clean(grace, CLEAN_BATCH, 'failed'),
      this.#webhooks.clean(grace, CLEAN_BATCH, 'completed'),
      this.#webhooks.clean(grace, CLEAN_BATCH, 'failed'),
    ])
    return completed.length + failed.length
  }

  /** Closes everything; workers still running are closed at once (consumers are stopped first, normally). */
  async close(): Promise<void> {
    await Promise.allSettled(this.#workers.map((worker) => worker.close(true)))
    await Promise.allSettled([this.#jobs.close(), this.#webhooks.close(), this.#flows.close()])
    for (const connection of [this.#client, ...this.#workerConnections]) connection.disconnect()
  }
}

/**
 * A BullMQ Worker as a Consumer: at a stop, work in flight gets the grace period, then is aborted and
 * given back. A close still waiting after that (Redis away) is forced: the job then stalls and runs again.
 */
function bullConsumer(worker: Worker, shutdown: AbortController): Consumer {
  let stopping = false
  return {
    get running() {
      return !stopping && worker.isRunning()
    },
    async stop(graceMs: number) {
      stopping = true
      const giveBack = setTimeout(() => shutdown.abort(new ShutdownAbort('shutting down')), graceMs)
      const force = setTimeout(() => void worker.close(true), graceMs + FORCE_CLOSE_AFTER_MS)
      try {
        await worker.close()
      } finally {
        clearTimeout(giveBack)
        clearTimeout(force)
      }
    },
  }
}

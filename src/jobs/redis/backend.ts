// The Redis backend: jobs and webhook deliveries in Redis through BullMQ, shared by any number of API
// and worker processes (design notes: /work/shared/design/distributed-mode.md). BullMQ is the engine:
// its Workers take jobs, hold their locks, find the runs of dead workers (the stalled checker), and
// retry deliveries on our schedule (a custom backoff). A job with a webhook is the child of its
// delivery in a flow, so BullMQ releases the delivery in the same step that ends the job.
import { createHash, randomUUID } from 'node:crypto'
import { EventEmitter, once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  DelayedError,
  FlowProducer,
  Job,
  type JobsOptions,
  type Metrics,
  Queue,
  QueueEvents,
  QueueEventsProducer,
  UnrecoverableError,
  WaitingError,
  Worker,
  type WorkerOptions,
} from 'bullmq'
import type { FastifyBaseLogger } from 'fastify'
import { type ChainableCommander, Redis } from 'ioredis'
import {
  CANCEL_REASON,
  IdempotencyKeyReusedError,
  JOB_CANCELLED,
  RedisRefusedError,
  ShutdownAbort,
} from '../../errors.js'
import { OriginShare, SHARE_DEFER_MS, shareOf } from '../../webhooks/origin-share.js'
import { newWebhookId, webhookPayload } from '../../webhooks/payload.js'
import { attemptStatus, decide, logDecision } from '../../webhooks/policy.js'
import type {
  AttemptDelivery,
  CancelResult,
  ConsumeDeliveriesOptions,
  ConsumeJobsOptions,
  Consumer,
  CountEnded,
  IdempotencyClaim,
  JobBackend,
  JobCounts,
  RunJob,
  Submitted,
} from '../backend.js'
import { attemptRecord, type DeliveryAttempt, type DeliveryHistory } from '../deliveries.js'
import {
  DuplicateJobIdError,
  type JobRecord,
  lostRunsError,
  MAX_LOST_RUNS,
  type NewJob,
  StoreFullError,
  StoreUnavailableError,
} from '../embedded/store.js'
import type { JobListPage, JobListQuery, ListPosition } from '../listing.js'
import {
  emptyMinute,
  type JobSummary,
  latencyBucket,
  MINUTE_MS,
  SUMMARY_MINUTES,
  summaryMinutes,
} from '../summary.js'
import { type RedisJobData, type RedisJobResult, recordOf } from './view.js'

export interface RedisBackendOptions {
  url: string
  /** BullMQ's key prefix: every key of this deployment starts with it. */
  prefix: string
  ttlMs: number
  maxPending: number
  /** BullMQ's lockDuration and stalledInterval: a dead worker's job runs again within about twice this. */
  lockMs: number
  retryWaitsMs: readonly number[]
  countEnded: CountEnded
  log: FastifyBaseLogger
}

interface DeliveryData {
  jobId: string
  algorithm: string
  url: string
  webhookId: string
  /** Stored at the first attempt, so that every attempt sends the same body. */
  payload?: string
  /** Every attempt that counted, stored on the delivery job after it (GET /jobs/{job_id}/deliveries). */
  attempts?: DeliveryAttempt[]
}

/** What an Idempotency-Key's Redis key holds. */
interface KeyClaim {
  fingerprint: string
  id: string
  createdAt: number
}

const JOBS = 'jobs'
const WEBHOOKS = 'webhooks'
const CLEAN_BATCH = 1000
/** How long a stop waits, after the grace period, for work to be given back before closing anyway. */
const FORCE_CLOSE_AFTER_MS = 2000
/** How long closing the queues may wait for Redis at the end of a shutdown. */
const CLOSE_WAIT_MS = 1000
/** The custom event (on the jobs queue's event stream) asking every process to stop a job's run. */
const CANCEL_EVENT = 'algoserve-cancel'
/** How long a process remembers a cancel asked of a job, for a run that starts just after it. */
const CANCEL_MEMORY_MS = 10_000
/** How long a cancel waits for a running job to end (the contract: it ends within 1 s). */
const CANCEL_WAIT_MS = 5000
/** How often a cancel takes a job that is not the one cancelled (moved ahead of it just then) before leaving it to the workers. */
const CANCEL_TAKE_TRIES = 5
/**
 * Listing with a filter: the most jobs read at once (batches start at a page's size and double), and
 * the most looked at for one page.
 */
const LIST_BATCH = 400
const LIST_SCAN_MAX = 5000
/**
 * The jobs queue's Workers count ends by minute (BullMQ's metrics, in the script that ends a job), as
 * many minutes as the summary shows.
 */
const JOB_METRICS: Partial<WorkerOptions> = { metrics: { maxDataPoints: SUMMARY_MINUTES } }
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'])

/** Reconnect soon after an outage (BullMQ's default waits up to 20 s between tries). */
const retryStrategy = (times: number): number => Math.min(250 * times, 2000)

export class RedisBackend implements JobBackend {
  readonly kind = 'redis'
  readonly #o: RedisBackendOptions
  readonly #log: FastifyBaseLogger
  // The API's connections fail fast while Redis is away: no offline queue, one retry, a time limit.
  // BullMQ defines its scripts (about 60) on the connection it is given, and ioredis copies every one
  // onto each pipeline made from that connection: our own commands use a connection without them.
  readonly #client: Redis
  readonly #bullClient: Redis
  readonly #jobs: Queue<RedisJobData, RedisJobResult>
  readonly #webhooks: Queue<DeliveryData>
  readonly #flows: FlowProducer
  #initialised = false
  #refused: string | null = null
  #checked: Promise<void> | undefined
  readonly #workerConnections: Redis[] = []
  readonly #workers: Worker[] = []
  // One QueueEvents per process, made at the first need: job ends (for waiters) and cancels (for runs).
  #events: QueueEvents | undefined
  #producer: QueueEventsProducer | undefined
  readonly #ended = new EventEmitter().setMaxListeners(0)
  // Cancels asked, by job id (with when): a run that starts just after one is still stopped.
  readonly #cancels = new Map<string, number>()
  #jobWorker: Worker<RedisJobData, RedisJobResult> | undefined
  // A Worker without a processor (BullMQ's manual fetching), made at the first cancel of a waiting job.
  #fetcher: Worker<RedisJobData, RedisJobResult> | undefined

  constructor(options: RedisBackendOptions) {
    this.#o = options
    this.#log = options.log
    const failFast = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 2000,
      retryStrategy,
    }
    this.#client = new Redis(options.url, failFast)
    this.#bullClient = new Redis(options.url, failFast)
    for (const client of [this.#client, this.#bullClient]) {
      client.on('error', (error) => this.#log.debug({ err: error }, 'redis connection error'))
    }
    this.#client.on('ready', () => {
      this.#checked = this.#checkRedis()
    })
    const shared = { connection: this.#bullClient, prefix: options.prefix }
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
    if (
      this.#client.status !== 'ready' ||
      this.#bullClient.status !== 'ready' ||
      !this.#initialised ||
      this.#refused !== null
    ) {
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

  // Keys of our own beside BullMQ's, under the same prefix.
  #key(name: string): string {
    return `${this.#o.prefix}:algoserve:${name}`
  }

  async submit(job: NewJob, idempotency?: IdempotencyClaim): Promise<Submitted> {
    this.#usable()
    if (idempotency === undefined) {
      await this.#add(job)
      return { id: job.id, createdAt: job.createdAt, replayed: false }
    }
    // SET NX decides which of racing requests with one key creates the job; the others answer with
    // its id. The key lives as long as a finished job's retention.
    const key = this.#key(`idempotency:${createHash('sha256').update(idempotency.key).digest('hex')}`)
    const claim: KeyClaim = { fingerprint: idempotency.fingerprint, id: job.id, createdAt: job.createdAt }
    let seen: KeyClaim | null = null
    try {
      const ttl = Math.ceil(this.#o.ttlMs / 1000)
      for (let tries = 0; tries < 3 && seen === null; tries++) {
        if ((await this.#client.set(key, JSON.stringify(claim), 'EX', ttl, 'NX')) === 'OK') break
        const text = await this.#client.get(key)
        seen = text === null ? null : (JSON.parse(text) as KeyClaim)
      }
    } catch (error) {
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
    if (seen === null) {
      try {
        await this.#add(job)
      } catch (error) {
        await this.#client.del(key).catch(() => undefined)
        throw error
      }
      return { id: job.id, createdAt: job.createdAt, replayed: false }
    }
    if (seen.fingerprint !== idempotency.fingerprint) throw new IdempotencyKeyReusedError()
    // The request that won may still be adding the job: answer once it exists (or 503 if it never does).
    for (let waited = 0; waited < 2000; waited += 20) {
      if ((await this.#client.exists(this.#jobKey(seen.id)).catch(() => 0)) === 1) break
      await sleep(20)
    }
    if ((await this.#client.exists(this.#jobKey(seen.id)).catch(() => 0)) !== 1) {
      throw new StoreUnavailableError('The job of this Idempotency-Key was not created.')
    }
    return { id: seen.id, createdAt: seen.createdAt, replayed: true }
  }

  #jobKey(id: string): string {
    return `${this.#o.prefix}:${JOBS}:${id}`
  }

  async #add(job: NewJob): Promise<void> {
    const data: RedisJobData = { params: job.params, webhook: job.webhook, cheap: job.cheap }
    try {
      // BullMQ ignores an add with a taken id, and has no bounded queue: both are checked first, and
      // the bound is soft across API processes (README, Distributed mode).
      // BullMQ keeps jobs by state, ordered by when they entered it; GET /jobs lists by creation, so
      // every job is also in a sorted set of ours (all scores 0, members ordered by creation, newest
      // first: see listMember). It is written before the add, in the same round trip as the checks: a
      // refused or failed add leaves a member whose job is missing, which a listing skips and removes;
      // an add without its member cannot happen.
      // Plain reads in one pipeline: one write to Redis, and no Lua script for the count.
      const member = listMember(job)
      const [pending, existing] = await this.#withPending(
        this.#client.pipeline().exists(this.#jobKey(job.id)).zadd(this.#key('created'), 0, member),
      )
      if (existing === 1) {
        // The member names the other job's id: it goes, or the listing would show that job twice.
        await this.#client.zrem(this.#key('created'), member)
        throw new DuplicateJobIdError(job.id)
      }
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
      const { job, state } = await this.#readJob(id)
      return recordOf(job, state, this.#o.ttlMs, now)
    } catch (error) {
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
  }

  async #readJob(id: string): Promise<{ job: Job<RedisJobData, RedisJobResult> | undefined; state: string }> {
    const [job, state] = await Promise.all([Job.fromId(this.#jobs, id), this.#jobs.getJobState(id)])
    return { job: job as Job<RedisJobData, RedisJobResult> | undefined, state }
  }

  async cancel(id: string, now: number): Promise<CancelResult> {
    this.#usable()
    try {
      const { job, state } = await this.#readJob(id)
      const before = recordOf(job, state, this.#o.ttlMs, now)
      if (job === undefined || before === null) return { kind: 'not_found' }
      if (before.status === 'completed' || before.status === 'failed')
        return { kind: 'finished', job: before }
      // The cancel is first a mark on the job: a pending job with it reads as failed from now on, and
      // whoever takes it (this cancel, or a worker just before) fails it without running it. A running
      // job is stopped by the cancel event, in whichever process runs it.
      await job.updateData({ ...job.data, cancelledAt: now })
      await this.#subscribe()
      // Woken by the job's end in any process (QueueEvents); the event of the cancel itself wakes it
      // too, before the run has stopped, so the job is read again until it is no longer running.
      let wake = () => {}
      const onEnd = (ended: string) => {
        if (ended === id) wake()
      }
      this.#ended.on('ended', onEnd)
      try {
        await (this.#producer as QueueEventsProducer).publishEvent(
          { eventName: CANCEL_EVENT, jobId: id },
          10_000,
        )
        if (before.status === 'pending') await this.#endWaiting(job)
        const deadline = Date.now() + CANCEL_WAIT_MS
        for (;;) {
          const woken = new Promise<void>((resolve) => {
            wake = resolve
          })
          // The state first, then the job: read together, a job that ends between the two reads can
          // show `failed` without its reason, which would look like another end than the cancel.
          const state = await this.#jobs.getJobState(id)
          const after = (await Job.fromId(this.#jobs, id)) as Job<RedisJobData, RedisJobResult> | undefined
          const record = recordOf(after, state, this.#o.ttlMs, Date.now())
          if (record === null) return { kind: 'not_found' }
          if (record.status !== 'running') {
            const cancelled = record.status === 'failed' && record.error === JOB_CANCELLED
            return { kind: cancelled ? 'cancelled' : 'finished', job: record }
          }
          const left = deadline - Date.now()
          if (left <= 0) return { kind: 'stopping', job: record }
          let timer: NodeJS.Timeout | undefined
          await Promise.race([woken, new Promise((resolve) => (timer = setTimeout(resolve, left)))])
          clearTimeout(timer)
        }
      } finally {
        this.#ended.off('ended', onEnd)
      }
    } catch (error) {
      if (error instanceof Error && /Missing key/.test(error.message)) return { kind: 'not_found' }
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
  }

  /**
   * Ends a waiting job that is marked cancelled now, however long the line ahead of it: BullMQ fails
   * only an active job (moveToFailed needs its lock), so the job is moved to the front of the line
   * (lifo) and taken by this process's fetcher, then failed as a worker fails it, which releases its
   * webhook's delivery in the same step. A job taken instead (moved to the front just then: a stalled
   * run, a give-back) goes back to the front as it was, unless it is marked cancelled too; a worker
   * that took the job first fails it itself. Bounded in time: past it, the mark stays, and the
   * fetching goes on once Redis answers (its connection waits for Redis, as a worker's does).
   */
  async #endWaiting(job: Job<RedisJobData, RedisJobResult>): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const ending = this.#takeAndFail(job).catch((error: unknown) =>
      this.#log.warn({ err: error, job_id: job.id }, 'a cancelled job is left for a worker to end'),
    )
    await Promise.race([ending, new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_WAIT_MS)))])
    clearTimeout(timer)
  }

  async #takeAndFail(job: Job<RedisJobData, RedisJobResult>): Promise<void> {
    this.#fetcher ??= this.#worker<RedisJobData, RedisJobResult>(JOBS, 1, null, JOB_METRICS)
    for (let tries = 0; tries < CANCEL_TAKE_TRIES; tries++) {
      const state = await this.#jobs.getJobState(job.id as string)
      if (state !== 'waiting' && state !== 'prioritized') return
      await job.changePriority({ lifo: true })
      const token = randomUUID()
      const taken = await this.#fetcher.getNextJob(token, { block: false })
      if (taken === undefined) return
      if (taken.data.cancelledAt === undefined) {
        await taken.moveToWait(token)
        continue
      }
      await taken.moveToFailed(new UnrecoverableError(JOB_CANCELLED), token)
      const seconds = ((taken.finishedOn ?? Date.now()) - (taken.processedOn ?? Date.now())) / 1000
      this.#o.countEnded(taken.name, 'failed', Math.max(0, seconds))
      this.#countLatency(taken, 'failed')
      if (taken.id === job.id) return
    }
  }

  /**
   * Newest first from our sorted set of every job. Without a filter a page reads `limit` + 1 jobs;
   * with one, jobs are read in batches and filtered by their state, looking at most at LIST_SCAN_MAX
   * per page (the page is then short, and its cursor says where to go on). Members whose job is gone
   * (expired, or an add that failed) are removed as they are met.
   */
  async list(query: JobListQuery, now: number): Promise<JobListPage> {
    this.#usable()
    try {
      const index = this.#key('created')
      const filtered = query.status !== null || query.algorithm !== null
      const jobs: JobRecord[] = []
      let start = query.cursor === null ? '-' : `(${positionMember(query.cursor)}`
      let scanned = 0
      let filteredBatch = query.limit + 1
      let last: ListPosition | null = null
      for (;;) {
        const batch = filtered ? filteredBatch : query.limit + 1 - jobs.length
        filteredBatch = Math.min(LIST_BATCH, filteredBatch * 2)
        const members = await this.#client.zrangebylex(index, start, '+', 'LIMIT', 0, batch)
        if (members.length === 0) return { jobs, next: null }
        const records = await Promise.all(
          members.map(async (member) => {
            const { job, state } = await this.#readJob(memberId(member))
            return recordOf(job, state, this.#o.ttlMs, now)
          }),
        )
        const gone: string[] = []
        for (const [i, record] of records.entries()) {
          const member = members[i] as string
          scanned++
          if (record === null) {
            gone.push(member)
            continue
          }
          if (query.status !== null && record.status !== query.status) continue
          if (query.algorithm !== null && record.algorithm !== query.algorithm) continue
          if (jobs.length === query.limit) {
            if (gone.length > 0) await this.#cleanMembers(gone)
            return { jobs, next: last }
          }
          jobs.push(record)
          last = { createdAt: record.createdAt, id: record.id }
        }
        if (gone.length > 0) await this.#cleanMembers(gone)
        start = `(${members.at(-1) as string}`
        if (members.length < batch) return { jobs, next: null }
        if (scanned >= LIST_SCAN_MAX) return { jobs, next: positionOfMember(members.at(-1) as string) }
      }
    } catch (error) {
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
  }

  /**
   * Counts by state from BullMQ's lists and sets, in one pipeline: pending as #withPending counts it,
   * running by its active list; its finished sets are scored by finishedOn, so those past their
   * retention (which a read shows as gone, and the sweeper removes later) are left out by score
   * (O(log n)). Ends per minute from BullMQ's metrics; latencies from our
   * hash of each minute (#countLatency). A waiting job marked cancelled counts as pending until its
   * cancel has taken it (moments).
   */
  async summary(now: number): Promise<JobSummary> {
    this.#usable()
    try {
      const since = now - this.#o.ttlMs
      const minutes = summaryMinutes(now)
      const { keys } = this.#jobs
      const batch = this.#client
        .pipeline()
        .llen(keys.active as string)
        .zcount(keys.completed as string, `(${since}`, '+inf')
        .zcount(keys.failed as string, `(${since}`, '+inf')
      for (const minute of minutes) batch.hgetall(this.#latencyKey(minute))
      const [[pending, ...values], completed, failed] = await Promise.all([
        this.#withPending(batch),
        this.#jobs.getMetrics('completed', 0, SUMMARY_MINUTES - 1),
        this.#jobs.getMetrics('failed', 0, SUMMARY_MINUTES - 1),
      ])
      return {
        counts: {
          pending,
          running: Number(values[0] ?? 0),
          completed: Number(values[1] ?? 0),
          failed: Number(values[2] ?? 0),
        },
        ended: minutes.map((minute, i) => {
          const ends = emptyMinute(minute)
          ends.completed = endsIn(completed, minute)
          ends.failed = endsIn(failed, minute)
          const hash = (values[3 + i] ?? {}) as Record<string, string>
          ends.latency = ends.latency.map((_, bucket) => Number(hash[`b${bucket}`] ?? 0))
          ends.latencySumMs = Number(hash.sum_ms ?? 0)
          return ends
        }),
      }
    } catch (error) {
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
  }

  #latencyKey(minute: number): string {
    return this.#key(`latency:${minute / MINUTE_MS}`)
  }

  /**
   * Adds the latency (creation to end, as a read shows them) of a job this process just ended to the
   * hash of the minute BullMQ's metrics count it in (finishedOn's). Written after the end, not with
   * it: a process that dies in between leaves the job out of the latencies (README).
   */
  #countLatency(job: Job<RedisJobData, RedisJobResult>, status: 'completed' | 'failed'): void {
    const record = recordOf(job, status, Number.POSITIVE_INFINITY, 0)
    if (job.finishedOn === undefined || record?.completedAt == null) return
    const latency = Math.max(0, record.completedAt - record.createdAt)
    const key = this.#latencyKey(Math.floor(job.finishedOn / MINUTE_MS) * MINUTE_MS)
    this.#client
      .pipeline()
      .hincrby(key, `b${latencyBucket(latency)}`, 1)
      .hincrby(key, 'sum_ms', latency)
      .expire(key, ((SUMMARY_MINUTES + 1) * MINUTE_MS) / 1000)
      .exec()
      .then((answers) => {
        const failed = answers?.find(([error]) => error !== null)
        if (answers === null || failed !== undefined) throw failed?.[0] ?? new Error('no answer')
      })
      .catch((error: unknown) =>
        this.#log.warn({ err: error, job_id: job.id }, "a job's latency was not counted in the summary"),
      )
  }

  /** Removes the members of jobs that no longer exist (a job past its retention may linger a moment). */
  async #cleanMembers(members: string[]): Promise<void> {
    const exists = await Promise.all(members.map((m) => this.#client.exists(this.#jobKey(memberId(m)))))
    const gone = members.filter((_, i) => exists[i] === 0)
    if (gone.length > 0) await this.#client.zrem(this.#key('created'), ...gone)
  }

  /** The delivery job (same id as the job, in the webhooks queue) holds its attempts in its data. */
  async deliveries(id: string, now: number): Promise<DeliveryHistory | null> {
    this.#usable()
    try {
      const { job, state } = await this.#readJob(id)
      const record = recordOf(job, state, this.#o.ttlMs, now)
      if (record === null) return null
      if (record.webhook === null) return { jobId: id, url: null, state: 'none', attempts: [] }
      const [delivery, deliveryState] = await Promise.all([
        Job.fromId<DeliveryData>(this.#webhooks, id),
        this.#webhooks.getJobState(id),
      ])
      const attempts = delivery?.data.attempts ?? []
      let historyState: DeliveryHistory['state'] = attempts.length === 0 ? 'waiting' : 'retrying'
      if (deliveryState === 'completed') historyState = 'delivered'
      if (deliveryState === 'failed') historyState = 'failed'
      return { jobId: id, url: record.webhook, state: historyState, attempts }
    } catch (error) {
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
  }

  async onEnded(listener: (id: string) => void): Promise<void> {
    this.#ended.on('ended', listener)
    await this.#subscribe()
  }

  /** Starts this process's QueueEvents (one for everything) and the producer of cancel events. */
  async #subscribe(): Promise<void> {
    if (this.#events === undefined) {
      const events = new QueueEvents(JOBS, { connection: this.#workerConnection(), prefix: this.#o.prefix })
      events.on('error', (error) => this.#log.debug({ err: error }, 'redis queue events error'))
      const ended = ({ jobId }: { jobId: string }) => this.#ended.emit('ended', jobId)
      events.on('completed', ended)
      events.on('failed', ended)
      events.on(CANCEL_EVENT as 'completed', ({ jobId }: { jobId: string }) => {
        this.#cancels.set(jobId, Date.now())
        this.#jobWorker?.cancelJob(jobId, CANCEL_REASON)
        // A pending job reads as failed from the cancel on: its waiters look again.
        this.#ended.emit('ended', jobId)
        for (const [id, at] of this.#cancels) if (at < Date.now() - CANCEL_MEMORY_MS) this.#cancels.delete(id)
      })
      this.#events = events
      this.#producer = new QueueEventsProducer(JOBS, { connection: this.#bullClient, prefix: this.#o.prefix })
    }
    await this.#events.waitUntilReady()
  }

  async countPending(): Promise<number> {
    return (await this.counts()).waiting
  }

  async counts(): Promise<JobCounts> {
    this.#usable()
    try {
      const [waiting, running] = await this.#withPending(
        this.#client.pipeline().llen(this.#jobs.keys.active as string),
      )
      return { waiting, running: running as number }
    } catch (error) {
      throw new StoreUnavailableError('Redis failed.', { cause: error })
    }
  }

  /**
   * Runs `pipeline` with the pending count added at its end (BullMQ's wait list and its prioritized and
   * delayed sets: the one definition of pending), and gives that count first, then the pipeline's own
   * answers. Throws the first error.
   */
  async #withPending(pipeline: ChainableCommander): Promise<[number, ...unknown[]]> {
    const { keys } = this.#jobs
    const answers = await pipeline
      .llen(keys.wait as string)
      .zcard(keys.prioritized as string)
      .zcard(keys.delayed as string)
      .exec()
    const failed = answers?.find(([error]) => error !== null)
    if (answers === null || failed !== undefined) throw failed?.[0] ?? new Error('no answer')
    const values = answers.map(([, value]) => value)
    const own = values.slice(0, -3)
    const pending = values.slice(-3).reduce((sum: number, count) => sum + (count as number), 0)
    return [pending, ...own]
  }

  async ping(): Promise<boolean> {
    try {
      this.#usable()
      let timer: NodeJS.Timeout | undefined
      const answer = await Promise.race([
        Promise.all([this.#client.ping(), this.#bullClient.ping()]),
        new Promise((resolve) => (timer = setTimeout(resolve, 1000, 'late'))),
      ])
      clearTimeout(timer)
      return Array.isArray(answer) && answer.every((pong) => pong === 'PONG')
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

  /** A Worker on `queue`; without `process`, one that only takes what it is asked for (getNextJob). */
  #worker<D, R>(
    queue: string,
    concurrency: number,
    process: ((job: Job<D, R>, token: string | undefined, signal: AbortSignal) => Promise<R>) | null,
    settings: Partial<WorkerOptions> = {},
  ): Worker<D, R> {
    const worker = new Worker<D, R>(
      queue,
      process === null ? null : (job, token, signal) => process(job, token, signal as AbortSignal),
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
        // Cancelled while it waited (or just as it was taken): it fails without running.
        if (job.data.cancelledAt !== undefined || this.#cancels.has(job.id as string)) {
          throw new UnrecoverableError(JOB_CANCELLED)
        }
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
      JOB_METRICS,
    )
    this.#jobWorker = worker
    // Cancels reach this process through its QueueEvents.
    this.#subscribe().catch((error: unknown) =>
      this.#log.error({ err: error }, 'could not listen for job cancels'),
    )
    const ended = (job: Job<RedisJobData, RedisJobResult>, status: 'completed' | 'failed') => {
      const seconds = ((job.finishedOn ?? Date.now()) - (job.processedOn ?? Date.now())) / 1000
      this.#o.countEnded(job.name, status, Math.max(0, seconds))
      this.#countLatency(job, status)
    }
    worker.on('completed', (job) => ended(job, 'completed'))
    worker.on('failed', (job) => {
      // Also emitted for a run that is retried; only a final failure has finishedOn.
      if (job?.finishedOn) ended(job, 'failed')
    })
    return bullConsumer(worker, shutdown, this.#log)
  }

  consumeDeliveries(attempt: AttemptDelivery, options: ConsumeDeliveriesOptions): Consumer {
    const waits = this.#o.retryWaitsMs
    const shutdown = new AbortController()
    const share = new OriginShare(shareOf(options.maxInFlight))
    const worker = this.#worker<DeliveryData, void>(
      WEBHOOKS,
      options.maxInFlight,
      async (job, token, signal) => {
        if (!share.take(job.data.url)) {
          // Its receiver has its share of this process's slots: later (not an attempt), so that the
          // deliveries behind it, to other receivers, are taken first.
          await job.moveToDelayed(Date.now() + SHARE_DEFER_MS, token)
          throw new DelayedError()
        }
        try {
          await this.#deliver(job, token, AbortSignal.any([shutdown.signal, signal]), attempt, options)
        } finally {
          share.release(job.data.url)
        }
      },
      { settings: { backoffStrategy: (attemptsMade: number) => waits[attemptsMade - 1] ?? 0 } },
    )
    return bullConsumer(worker, shutdown, this.#log)
  }

  /** One attempt of a delivery, and what it means (policy.ts) as BullMQ's outcome. */
  async #deliver(
    job: Job<DeliveryData>,
    token: string | undefined,
    signal: AbortSignal,
    attempt: AttemptDelivery,
    options: ConsumeDeliveriesOptions,
  ): Promise<void> {
    const waits = this.#o.retryWaitsMs
    let { payload } = job.data
    if (payload === undefined) {
      payload = await this.#payloadOf(job)
      await job.updateData({ ...job.data, payload })
    }
    const { jobId, url, webhookId } = job.data
    const at = Date.now()
    const started = performance.now()
    const result = await attempt({ id: webhookId, url, payload }, signal)
    const durationMs = performance.now() - started
    const number = job.attemptsMade + 1
    const decision = decide(result, number, waits)
    if (decision.kind !== 'released') {
      const nextAt = decision.kind === 'retry' ? Date.now() + decision.waitMs : null
      const record = attemptRecord(result, number, at, durationMs, nextAt)
      const attempts = [...(job.data.attempts ?? []), record]
      await job.updateData({ ...job.data, payload, attempts })
    }
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
    // The oldest members of our sorted set are the likeliest to be gone (cleaned here, or removed by
    // BullMQ's own age rule when another job ended): those whose job no longer exists are removed.
    const oldest = await this.#client.zrevrangebylex(this.#key('created'), '+', '-', 'LIMIT', 0, CLEAN_BATCH)
    if (oldest.length > 0) await this.#cleanMembers(oldest)
    return completed.length + failed.length
  }

  /**
   * Closes everything; workers still running are closed at once (consumers are stopped first,
   * normally). BullMQ's closes wait for Redis, and a close that does not end in CLOSE_WAIT_MS (Redis
   * away) is left behind: the connections are cut either way.
   */
  async close(): Promise<void> {
    await settledWithin(
      CLOSE_WAIT_MS,
      this.#workers.map((worker) => worker.close(true)),
    )
    await settledWithin(CLOSE_WAIT_MS, [
      this.#jobs.close(),
      this.#webhooks.close(),
      this.#flows.close(),
      this.#events?.close(),
      this.#producer?.close(),
    ])
    for (const connection of [this.#client, this.#bullClient, ...this.#workerConnections]) {
      connection.disconnect()
    }
  }
}

/** Resolves once every promise has settled, or after `ms`, whichever is first. */
async function settledWithin(ms: number, promises: Array<Promise<unknown> | undefined>): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    Promise.allSettled(promises),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms)
    }),
  ])
  clearTimeout(timer)
}

/**
 * A BullMQ Worker as a Consumer: at a stop, work in flight gets the grace period, then is aborted and
 * given back. A close still waiting FORCE_CLOSE_AFTER_MS after that (Redis away, so nothing can be given
 * back) is left behind: a job it held stalls and runs again elsewhere. Its close cannot be forced
 * instead: BullMQ's close(true) returns the first close's promise.
 */
function bullConsumer(worker: Worker, shutdown: AbortController, log: FastifyBaseLogger): Consumer {
  let stopping = false
  return {
    get running() {
      return !stopping && worker.isRunning()
    },
    async stop(graceMs: number) {
      stopping = true
      const giveBack = setTimeout(() => shutdown.abort(new ShutdownAbort('shutting down')), graceMs)
      let closed = false
      await settledWithin(graceMs + FORCE_CLOSE_AFTER_MS, [
        worker.close().finally(() => {
          closed = true
        }),
      ])
      clearTimeout(giveBack)
      if (!closed) log.warn({ queue: worker.name }, 'Redis did not answer: the worker stops without it')
    },
  }
}

// The member of a job in our sorted set: ordered as GET /jobs lists (created_at desc, then id desc)
// when compared as bytes. Both parts are inverted (a time counted down from 10^15, each hex digit from
// f), so that ascending order is newest first; the id is read back from it.
const TIME_LIMIT = 10 ** 15
const invertHex = (hex: string): string =>
  [...hex].map((digit) => (15 - Number.parseInt(digit, 16)).toString(16)).join('')

function positionMember(position: ListPosition): string {
  return `${String(TIME_LIMIT - 1 - position.createdAt).padStart(15, '0')}:${invertHex(position.id)}`
}

const listMember = (job: NewJob): string => positionMember({ createdAt: job.createdAt, id: job.id })

const memberId = (member: string): string => invertHex(member.slice(16))

function positionOfMember(member: string): ListPosition {
  return { createdAt: TIME_LIMIT - 1 - Number(member.slice(0, 15)), id: memberId(member) }
}

/**
 * The jobs that ended in `minute` by BullMQ's metrics: a data point is written for each whole minute
 * once a job ends in a later one (the newest first, the one before prevTS's minute at 0, zeros for
 * minutes without an end), and the ends of prevTS's minute so far are count - prevCount.
 */
function endsIn(metrics: Metrics, minute: number): number {
  const { count, prevTS, prevCount } = metrics.meta
  const last = Math.floor(prevTS / MINUTE_MS)
  const at = minute / MINUTE_MS
  if (at > last) return 0
  if (at === last) return count - prevCount
  return metrics.data[last - 1 - at] ?? 0
}

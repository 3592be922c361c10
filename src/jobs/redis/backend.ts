// The Redis backend: jobs and webhook deliveries in Redis through BullMQ, shared by any number of API
// and worker processes (docs/distributed.md). BullMQ is the engine: its Workers take jobs, hold their
// locks, find the runs of dead workers (the stalled checker), and retry deliveries on our schedule. This
// class only hands each call to the file of its concern: connections and readiness, the queue of each
// algorithm, submit (with idempotency), cancel, listing, summary and counts, deliveries, and the
// consumers.
import type { AttemptDelivery } from '../../webhooks/attempt.js'
import type {
  BackendCapabilities,
  CancelResult,
  ConsumeDeliveriesOptions,
  ConsumeJobsOptions,
  Consumer,
  IdempotencyClaim,
  JobBackend,
  JobCounts,
  RunJob,
  Submitted,
} from '../backend.js'
import type { DeliveryHistory } from '../deliveries.js'
import type { JobRecord, NewJob } from '../job.js'
import type { JobListPage, JobListQuery } from '../listing.js'
import type { JobSummary } from '../summary.js'
import { RedisCancel } from './cancel.js'
import { type RedisBackendOptions, RedisConnections } from './connections.js'
import { consumeJobs, RUNNER } from './consumers.js'
import { consumeDeliveries, deliveries } from './deliveries.js'
import { JobEvents } from './events.js'
import { cleanOldest, list } from './listing.js'
import { submit } from './submit.js'
import { counts, summary } from './summary.js'
import { recordOf } from './view.js'

export type { RedisBackendOptions }

/** How many finished jobs (and list members) one sweep removes at most, of each kind. */
const CLEAN_BATCH = 1000

export class RedisBackend implements JobBackend {
  readonly capabilities: BackendCapabilities = { shared: true }
  readonly #redis: RedisConnections
  readonly #events: JobEvents
  readonly #cancel: RedisCancel

  constructor(options: RedisBackendOptions) {
    this.#redis = new RedisConnections(options)
    this.#events = new JobEvents(this.#redis)
    this.#cancel = new RedisCancel(this.#redis, this.#events)
  }

  /**
   * Waits up to `waitMs` for Redis. Refuses (throws) a Redis that evicts keys; starts anyway when Redis
   * is away, answering 503 until it comes.
   */
  open(waitMs?: number): Promise<void> {
    return this.#redis.open(waitMs)
  }

  submit(job: NewJob, idempotency?: IdempotencyClaim): Promise<Submitted> {
    return submit(this.#redis, job, idempotency)
  }

  // The guard written out (not redis.guard): a read is a hot path, and this saves it a closure.
  async read(id: string, now: number): Promise<JobRecord | null> {
    const redis = this.#redis
    redis.usable()
    try {
      const { job, state } = await redis.queues.read(id)
      return recordOf(job, state, redis.settings.ttlMs, now)
    } catch (error) {
      throw redis.failure(error)
    }
  }

  cancel(id: string, now: number): Promise<CancelResult> {
    return this.#cancel.cancel(id, now)
  }

  list(query: JobListQuery, now: number): Promise<JobListPage> {
    return this.#redis.guard(() => list(this.#redis, query, now))
  }

  summary(now: number): Promise<JobSummary> {
    return this.#redis.guard(() => summary(this.#redis, now))
  }

  deliveries(id: string, now: number): Promise<DeliveryHistory | null> {
    return this.#redis.guard(() => deliveries(this.#redis, id, now))
  }

  async onEnded(listener: (id: string) => void): Promise<void> {
    this.#events.onEnded(listener)
    await this.#events.subscribe()
  }

  async onChanged(listener: (id: string) => void): Promise<void> {
    this.#events.onChanged(listener)
    await this.#events.subscribe()
  }

  counts(): Promise<JobCounts> {
    return this.#redis.guard(() => counts(this.#redis))
  }

  ping(): Promise<boolean> {
    return this.#redis.ping()
  }

  /**
   * Each algorithm's Workers that run jobs, from Redis's list of connections (BullMQ names them by
   * queue); null where CLIENT LIST is not allowed (an ACL user without it, some managed Redis).
   */
  workers(): Promise<ReadonlyMap<string, number> | null> {
    const redis = this.#redis
    return redis.guard(async () => {
      const algorithms = redis.queues.known()
      try {
        const counts = await Promise.all(
          algorithms.map(async (algorithm) => {
            const connections = await redis.queues.of(algorithm).getWorkers()
            // BullMQ answers a Redis without CLIENT LIST (GCP's) with a stand-in entry.
            if (connections.some(({ rawname }) => rawname === undefined)) throw new Error('no CLIENT LIST')
            return connections.filter(({ rawname }) => rawname?.endsWith(`:w:${RUNNER}`)).length
          }),
        )
        return new Map(algorithms.map((algorithm, i) => [algorithm, counts[i] as number]))
      } catch (error) {
        redis.log.debug({ err: error }, 'could not count the workers (CLIENT LIST)')
        return null
      }
    })
  }

  consumeJobs(run: RunJob, options: ConsumeJobsOptions): Consumer {
    return consumeJobs(this.#redis, this.#events, run, options)
  }

  consumeDeliveries(send: AttemptDelivery, options: ConsumeDeliveriesOptions): Consumer {
    return consumeDeliveries(this.#redis, send, options)
  }

  /** BullMQ's own age-based removal runs only when another job ends; this removes the rest. */
  expire(): Promise<number> {
    const redis = this.#redis
    return redis.guard(async () => {
      const grace = redis.settings.ttlMs
      const queues = redis.queues.known().map((algorithm) => redis.queues.of(algorithm))
      const [removed] = await Promise.all([
        Promise.all(
          queues.flatMap((queue) => [
            queue.clean(grace, CLEAN_BATCH, 'completed'),
            queue.clean(grace, CLEAN_BATCH, 'failed'),
          ]),
        ),
        redis.webhooks.clean(grace, CLEAN_BATCH, 'completed'),
        redis.webhooks.clean(grace, CLEAN_BATCH, 'failed'),
      ])
      await cleanOldest(redis, CLEAN_BATCH)
      return removed.reduce((sum, ids) => sum + ids.length, 0)
    })
  }

  close(): Promise<void> {
    return this.#redis.close()
  }
}

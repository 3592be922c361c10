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
import { isLegacyKey, nameOfKey } from './queues.js'
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

  /**
   * Takes the versions of a reload (by versionKey) as this process's too: named in the deployment's set,
   * and heard of by its waiters.
   */
  async follow(versions: readonly string[]): Promise<void> {
    this.#events.follow(versions)
    await this.#redis.guard(() => this.#redis.queues.add(versions))
  }

  counts(): Promise<JobCounts> {
    return this.#redis.guard(() => counts(this.#redis))
  }

  ping(): Promise<boolean> {
    return this.#redis.ping()
  }

  /**
   * The live processes that take each algorithm's jobs (from those of its versions' queues, each process
   * once), and those of each version by versionKey: a name and a versionKey never clash ('@').
   */
  async workers(): Promise<ReadonlyMap<string, number> | null> {
    const runners = await this.#runners()
    if (runners === null) return null
    const byName = new Map<string, Set<string>>()
    for (const [key, marks] of runners) {
      const name = nameOfKey(key)
      byName.set(name, new Set([...(byName.get(name) ?? []), ...marks]))
    }
    return new Map([
      ...[...byName].map(([name, marks]) => [name, marks.size] as const),
      ...this.#byVersion(runners),
    ])
  }

  async versionWorkers(): Promise<ReadonlyMap<string, number> | null> {
    const runners = await this.#runners()
    return runners === null ? null : new Map(this.#byVersion(runners))
  }

  #byVersion(runners: ReadonlyMap<string, ReadonlySet<string>>): [string, number][] {
    return [...runners].flatMap(([key, marks]) => (isLegacyKey(key) ? [] : [[key, marks.size]]))
  }

  /**
   * The processes whose Workers run jobs of each queue, by their marks, from Redis's list of connections
   * (BullMQ names them by queue; a process of a release before versions has no mark, and each of its
   * connections is one); null where CLIENT LIST is not allowed (an ACL user without it, some managed
   * Redis).
   */
  #runners(): Promise<ReadonlyMap<string, ReadonlySet<string>> | null> {
    const redis = this.#redis
    return redis.guard(async () => {
      const keys = redis.queues.known()
      try {
        const marks = await Promise.all(
          keys.map(async (key) => {
            const connections = await redis.queues.of(key).getWorkers()
            // BullMQ answers a Redis without CLIENT LIST (GCP's) with a stand-in entry.
            if (connections.some(({ rawname }) => rawname === undefined)) throw new Error('no CLIENT LIST')
            const found = new Set<string>()
            for (const { rawname, id } of connections) {
              if (rawname?.endsWith(`:w:${RUNNER}`)) found.add(`connection ${id}`)
              const at = rawname?.indexOf(`:w:${RUNNER}.`) ?? -1
              if (at >= 0) found.add((rawname as string).slice(at + `:w:${RUNNER}.`.length))
            }
            return found
          }),
        )
        return new Map(keys.map((key, i) => [key, marks[i] as Set<string>]))
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
      const queues = redis.queues.known().map((key) => redis.queues.of(key))
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

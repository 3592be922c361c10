// A BullMQ queue per algorithm version: a worker takes jobs only from the queues of the versions it has,
// and one version's backlog waits in its own queue, out of the others' way. A job's id finds its queue
// through a hash of ours (id → queue key), written with the job's listing member; the deployment's
// queues are named in a set of ours, so that counts, the summary and sweeps read across all of them,
// including those of versions this process does not load. A queue key is the version's versionKey
// (`Name@1.2.0`); a bare name is the queue of jobs queued before versions (docs/distributed.md).
import { Queue } from 'bullmq'
import { versionKey } from '../../algorithms/registry.js'
import type { RedisClient } from './topology.js'
import { type RedisJob, type RedisJobData, type RedisJobResult, readJob } from './view.js'

export type JobQueue = Queue<RedisJobData, RedisJobResult>

const QUEUE_PREFIX = 'jobs.'

/**
 * The queue of a version's jobs, by its key (BullMQ refuses ':' in a name; algorithm names and semantic
 * versions have none, and it takes '@' and '.').
 */
export const jobQueueName = (key: string): string => `${QUEUE_PREFIX}${key}`

/** The queue key of a job of `algorithm` pinned to `version`; '' (queued before versions): the bare name. */
export const queueKey = (algorithm: string, version: string): string =>
  version === '' ? algorithm : versionKey(algorithm, version)

/** The algorithm name of a queue key. */
export const nameOfKey = (key: string): string => {
  const at = key.indexOf('@')
  return at < 0 ? key : key.slice(0, at)
}

/** Whether a queue key is that of jobs queued before versions (a bare name). */
export const isLegacyKey = (key: string): boolean => !key.includes('@')

/** Ids whose queue this process remembers: most reads are of jobs it made or read lately. */
const REMEMBERED_IDS = 10_000
/** How long the deployment's list of queues is used before it is read again. */
const KNOWN_FOR_MS = 5000

export class JobQueues {
  readonly #connection: RedisClient
  readonly #client: RedisClient
  readonly #prefix: string
  readonly #indexKey: string
  readonly #namesKey: string
  readonly #queues = new Map<string, JobQueue>()
  readonly #remembered = new Map<string, string>()
  #own: readonly string[]
  #known: readonly string[]
  #knownAt = 0
  #reading: Promise<void> | undefined
  readonly #onError: (error: Error) => void

  /**
   * `connection` is the one BullMQ's queues share; `client`, ours; `key` names a key of ours; `own`,
   * the queue keys of the versions this process loads; `onError` hears the queues' errors (Redis away:
   * the readiness check tells that).
   */
  constructor(
    connection: RedisClient,
    client: RedisClient,
    prefix: string,
    key: (name: string) => string,
    own: readonly string[],
    onError: (error: Error) => void,
  ) {
    this.#onError = onError
    this.#connection = connection
    this.#client = client
    this.#prefix = prefix
    this.#indexKey = key('algorithm-of')
    this.#namesKey = key('algorithms')
    this.#own = [...new Set(own)]
    this.#known = [...this.#own]
  }

  /** The queue of key `key`, made at its first use. */
  of(key: string): JobQueue {
    let queue = this.#queues.get(key)
    if (queue === undefined) {
      queue = new Queue<RedisJobData, RedisJobResult>(jobQueueName(key), {
        connection: this.#connection,
        prefix: this.#prefix,
      })
      queue.on('error', this.#onError)
      this.#queues.set(key, queue)
    }
    return queue
  }

  /** The queue a job read from BullMQ is in. */
  ofJob(job: RedisJob): JobQueue {
    return this.of(job.queueName.slice(QUEUE_PREFIX.length))
  }

  /** The key of job `id`'s hash (BullMQ's), in the queue of key `key`. */
  jobKey(key: string, id: string): string {
    return `${this.#prefix}:${jobQueueName(key)}:${id}`
  }

  /** Names this process's queues in the deployment's set (at every connection). */
  async register(): Promise<void> {
    await this.#client.sadd(this.#namesKey, ...this.#own)
    await this.#readKnown()
  }

  /** Adds the queues of versions loaded since (a reload) to this process's, and names them. */
  async add(keys: readonly string[]): Promise<void> {
    const fresh = keys.filter((key) => !this.#own.includes(key))
    if (fresh.length === 0) return
    this.#own = [...this.#own, ...fresh]
    this.#known = [...new Set([...this.#known, ...fresh])].sort()
    await this.#client.sadd(this.#namesKey, ...fresh)
  }

  /**
   * The queue keys of the deployment (every one a process has registered), as last read; read again
   * in the background when older than KNOWN_FOR_MS.
   */
  known(): readonly string[] {
    if (Date.now() - this.#knownAt > KNOWN_FOR_MS) this.#readKnown().catch(() => undefined)
    return this.#known
  }

  #readKnown(): Promise<void> {
    this.#reading ??= this.#client
      .smembers(this.#namesKey)
      .then((names) => {
        this.#known = [...new Set([...this.#known, ...names])].sort()
        this.#knownAt = Date.now()
      })
      .finally(() => {
        this.#reading = undefined
      })
    return this.#reading
  }

  /** The index entry of a new job, for the pipeline that writes its listing member. */
  claimIndex(pipeline: ReturnType<RedisClient['pipeline']>, id: string, key: string): void {
    pipeline.hsetnx(this.#indexKey, id, key).hget(this.#indexKey, id)
  }

  /** Points job `id` at queue `key` (its entry named a job that no longer exists). */
  async reindex(id: string, key: string): Promise<void> {
    await this.#client.hset(this.#indexKey, id, key)
    this.remember(id, key)
  }

  remember(id: string, key: string): void {
    if (this.#remembered.size >= REMEMBERED_IDS) {
      this.#remembered.delete(this.#remembered.keys().next().value as string)
    }
    this.#remembered.set(id, key)
  }

  /** The queue key of job `id` as the index has it now (null when no job has it), remembered. */
  async indexed(id: string): Promise<string | null> {
    const key = await this.#client.hget(this.#indexKey, id)
    if (key !== null) this.remember(id, key)
    return key
  }

  /**
   * Job `id` and its BullMQ state (`unknown` when no job has the id), from its queue. A remembered
   * queue can be stale when the id was taken again, by a job of another version, after the first one
   * expired: a job not found there is looked for in the index.
   */
  async read(id: string): Promise<{ job: RedisJob | undefined; state: string }> {
    const remembered = this.#remembered.get(id)
    const key = remembered ?? (await this.indexed(id))
    if (key === null) return { job: undefined, state: 'unknown' }
    const found = await readJob(this.of(key), id)
    if (found.job !== undefined || remembered === undefined) return found
    const fresh = await this.indexed(id)
    return fresh === null || fresh === key ? found : readJob(this.of(fresh), id)
  }

  /** The queue keys of jobs `ids`, in one read. */
  async keysOf(ids: readonly string[]): Promise<Array<string | null>> {
    if (ids.length === 0) return []
    const keys = await this.#client.hmget(this.#indexKey, ...ids)
    for (const [i, key] of keys.entries()) if (key !== null) this.remember(ids[i] as string, key)
    return keys
  }

  /** Forgets the entries of jobs that no longer exist. */
  async forget(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.#remembered.delete(id)
    if (ids.length > 0) await this.#client.hdel(this.#indexKey, ...ids)
  }

  /** Every queue this process made. */
  opened(): JobQueue[] {
    return [...this.#queues.values()]
  }
}

// A BullMQ queue per algorithm: a worker takes jobs only from the queues of the algorithms it has, and
// one algorithm's backlog waits in its own queue, out of the others' way. A job's id finds its queue
// through a hash of ours (id → algorithm), written with the job's listing member; the deployment's
// queues are named in a set of ours, so that counts, the summary and sweeps read across all of them,
// including those of algorithms this process does not load.
import { Queue } from 'bullmq'
import type { RedisClient } from './topology.js'
import { type RedisJob, type RedisJobData, type RedisJobResult, readJob } from './view.js'

export type JobQueue = Queue<RedisJobData, RedisJobResult>

/** The queue of an algorithm's jobs (BullMQ refuses ':' in a name; algorithm names have none). */
export const jobQueueName = (algorithm: string): string => `jobs.${algorithm}`

/** Ids whose algorithm this process remembers: most reads are of jobs it made or read lately. */
const REMEMBERED_IDS = 10_000
/** How long the deployment's list of algorithms is used before it is read again. */
const KNOWN_FOR_MS = 5000

export class JobQueues {
  readonly #connection: RedisClient
  readonly #client: RedisClient
  readonly #prefix: string
  readonly #indexKey: string
  readonly #namesKey: string
  readonly #queues = new Map<string, JobQueue>()
  readonly #remembered = new Map<string, string>()
  #known: readonly string[]
  #knownAt = 0
  #reading: Promise<void> | undefined
  readonly #onError: (error: Error) => void

  /**
   * `connection` is the one BullMQ's queues share; `client`, ours; `key` names a key of ours; `own`,
   * the algorithms this process loads; `onError` hears the queues' errors (Redis away: the readiness
   * check tells that).
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
    this.#known = [...new Set(own)]
  }

  /** The queue of `algorithm`'s jobs, made at its first use. */
  of(algorithm: string): JobQueue {
    let queue = this.#queues.get(algorithm)
    if (queue === undefined) {
      queue = new Queue<RedisJobData, RedisJobResult>(jobQueueName(algorithm), {
        connection: this.#connection,
        prefix: this.#prefix,
      })
      queue.on('error', this.#onError)
      this.#queues.set(algorithm, queue)
    }
    return queue
  }

  /** The key of job `id`'s hash (BullMQ's), in `algorithm`'s queue. */
  jobKey(algorithm: string, id: string): string {
    return `${this.#prefix}:${jobQueueName(algorithm)}:${id}`
  }

  /** Names this process's algorithms in the deployment's set (at every connection). */
  async register(): Promise<void> {
    await this.#client.sadd(this.#namesKey, ...this.#known)
    await this.#readKnown()
  }

  /**
   * The algorithms of the deployment (every one a process has registered), as last read; read again
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
  claimIndex(pipeline: ReturnType<RedisClient['pipeline']>, id: string, algorithm: string): void {
    pipeline.hsetnx(this.#indexKey, id, algorithm).hget(this.#indexKey, id)
  }

  /** Points job `id` at `algorithm` (its entry named a job that no longer exists). */
  async reindex(id: string, algorithm: string): Promise<void> {
    await this.#client.hset(this.#indexKey, id, algorithm)
    this.remember(id, algorithm)
  }

  remember(id: string, algorithm: string): void {
    if (this.#remembered.size >= REMEMBERED_IDS) {
      this.#remembered.delete(this.#remembered.keys().next().value as string)
    }
    this.#remembered.set(id, algorithm)
  }

  /** The algorithm of job `id` as the index has it now (null when no job has it), remembered. */
  async #indexed(id: string): Promise<string | null> {
    const algorithm = await this.#client.hget(this.#indexKey, id)
    if (algorithm !== null) this.remember(id, algorithm)
    return algorithm
  }

  /**
   * Job `id` and its BullMQ state (`unknown` when no job has the id), from the queue of its algorithm.
   * A remembered algorithm can be stale when the id was taken again, by a job of another algorithm,
   * after the first one expired: a job not found there is looked for in the index.
   */
  async read(id: string): Promise<{ job: RedisJob | undefined; state: string }> {
    const remembered = this.#remembered.get(id)
    const algorithm = remembered ?? (await this.#indexed(id))
    if (algorithm === null) return { job: undefined, state: 'unknown' }
    const found = await readJob(this.of(algorithm), id)
    if (found.job !== undefined || remembered === undefined) return found
    const fresh = await this.#indexed(id)
    return fresh === null || fresh === algorithm ? found : readJob(this.of(fresh), id)
  }

  /** The algorithms of jobs `ids`, in one read. */
  async algorithmsOf(ids: readonly string[]): Promise<Array<string | null>> {
    if (ids.length === 0) return []
    const algorithms = await this.#client.hmget(this.#indexKey, ...ids)
    for (const [i, algorithm] of algorithms.entries())
      if (algorithm !== null) this.remember(ids[i] as string, algorithm)
    return algorithms
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

// The Redis backend's connections and its readiness: every connection to Redis is made here (ours,
// BullMQ's queues', and one of its own for each Worker and QueueEvents), with the checks of the Redis
// it reaches, the one guard every call passes (usable, and its failures told as the store's), and the
// closing of all of it. What the backend's parts share (its settings, our own keys) is reached from
// here too.
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  FlowProducer,
  type Job,
  Queue,
  QueueEvents,
  QueueEventsProducer,
  WaitingError,
  Worker,
  type WorkerOptions,
} from 'bullmq'
import type { FastifyBaseLogger } from 'fastify'
import { RedisRefusedError, StoreUnavailableError, storeFailure } from '../../errors.js'
import type { BackendOptions } from '../backend.js'
import { MAX_LOST_RUNS } from '../job.js'
import { LockWatch } from './lock-watch.js'
import { OutageLog } from './outage.js'
import { JobQueues } from './queues.js'
import {
  connect,
  pingHolder,
  type RedisClient,
  type RedisTopology,
  redisAddress,
  serversOf,
} from './topology.js'
import type { DeliveryData } from './view.js'

export interface RedisBackendOptions extends BackendOptions, RedisTopology {
  /** BullMQ's key prefix: every key of this deployment starts with it. */
  prefix: string
  /** BullMQ's lockDuration and stalledInterval: a dead worker's job runs again within about twice this. */
  lockMs: number
  /** Replicas that must acknowledge a new job's writes before it is accepted; 0 for none. */
  minReplicas?: number
  /**
   * The versions this process loads, by versionKey: the queues it submits to and hears the ends of
   * (those it loads at a reload are added: RedisBackend.follow).
   */
  versions: readonly string[]
}

/** The queue of webhook deliveries, and the event stream of our own events (cancels). */
export const WEBHOOKS = 'webhooks'
export const CONTROL = 'control'

/** How long a start may wait for a Redis that is reachable but slow to set up (TLS, a busy host). */
const OPEN_WAIT_MS = 10_000
/** How long closing may wait for Redis at the end of a shutdown. */
const CLOSE_WAIT_MS = 1000
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'])

/** Reconnect soon after an outage (BullMQ's default waits up to 20 s between tries). */
const retryStrategy = (times: number): number => Math.min(250 * times, 2000)

type Processor<D, R> = (job: Job<D, R>, token: string | undefined, signal: AbortSignal) => Promise<R>

export class RedisConnections {
  readonly settings: RedisBackendOptions
  readonly log: FastifyBaseLogger
  // The API's connections fail fast while Redis is away: no offline queue, one retry, a time limit.
  // BullMQ defines its scripts (about 60) on the connection it is given, and ioredis copies every one
  // onto each pipeline made from that connection: our own commands use a connection without them.
  readonly client: RedisClient
  readonly bullClient: RedisClient
  /** The queue of each algorithm's jobs. */
  readonly queues: JobQueues
  readonly webhooks: Queue<DeliveryData>
  readonly flows: FlowProducer
  /** What this process says of a Redis it cannot reach; our own connection is the one that tells. */
  readonly outage: OutageLog
  #initialised = false
  #aofWarned = false
  #refused: string | null = null
  #checked: Promise<void> | undefined
  readonly #setUp: Promise<void>
  readonly #waiting: RedisClient[] = []
  readonly #workers: Worker[] = []
  readonly #events: Array<QueueEvents | QueueEventsProducer> = []

  constructor(settings: RedisBackendOptions) {
    this.settings = settings
    this.log = settings.log
    const failFast = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 2000,
      retryStrategy,
    }
    this.client = connect(settings, failFast)
    this.bullClient = connect(settings, failFast)
    for (const client of [this.client, this.bullClient]) {
      client.on('error', (error) => this.log.debug({ err: error }, 'redis connection error'))
    }
    this.outage = new OutageLog(this.log, redisAddress(settings))
    this.client.on('error', (error) => this.outage.lost(error))
    this.client.on('ready', () => {
      this.outage.back()
      this.#checked = this.#checkRedis()
    })
    const shared = { connection: this.bullClient, prefix: settings.prefix }
    const onError = (error: Error) => this.log.debug({ err: error }, 'redis queue error')
    this.queues = new JobQueues(
      this.bullClient,
      this.client,
      settings.prefix,
      (name) => this.key(name),
      settings.versions,
      onError,
    )
    this.webhooks = new Queue(WEBHOOKS, shared)
    this.flows = new FlowProducer(shared)
    this.webhooks.on('error', onError)
    this.flows.on('error', onError)
    // Until BullMQ has loaded its scripts, nothing is sent through it (see usable).
    this.#setUp = Promise.all([this.webhooks.waitUntilReady(), this.flows.waitUntilReady()]).then(
      () => {
        this.#initialised = true
      },
      (error: unknown) => this.log.error({ err: error }, 'could not set up the Redis queues'),
    )
  }

  /**
   * Waits until Redis is usable (both connections ready, BullMQ's scripts loaded), so that a process
   * that listens accepts jobs at once; at most `waitMs`, however slow the connections are to come up.
   * Refuses (throws) a Redis that evicts keys. Starts at once when Redis is away (a connection fails),
   * answering 503 until it comes.
   */
  async open(waitMs = OPEN_WAIT_MS): Promise<void> {
    const timer = new AbortController()
    const { signal } = timer
    const ready = (client: RedisClient) =>
      client.status === 'ready' ? undefined : once(client, 'ready', { signal })
    // once() rejects at the connection's first 'error': Redis is away.
    await Promise.race([
      Promise.all([ready(this.client), ready(this.bullClient), this.#setUp]),
      sleep(waitMs, undefined, { signal }),
    ]).catch(() => undefined)
    timer.abort()
    await this.#checked
    if (this.#refused !== null) throw new RedisRefusedError(this.#refused)
  }

  /**
   * Checks the settings BullMQ relies on, at every (re)connection: on every node of a Cluster, since
   * a resharding or a failover may move the deployment's slot to any of them.
   */
  async #checkRedis(): Promise<void> {
    try {
      const servers = serversOf(this.client)
      // A node that does not answer (down) does not keep the others from being checked.
      const answers = await Promise.allSettled(servers.map((server) => server.info()))
      const failed = answers.find((answer) => answer.status === 'rejected')
      if (failed !== undefined && answers.every((answer) => answer.status === 'rejected')) throw failed.reason
      const infos = answers.map((answer) => (answer.status === 'fulfilled' ? answer.value : ''))
      const policies = infos.map((info) => /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? 'noeviction')
      const evicting = policies.findIndex((policy) => policy !== 'noeviction')
      if (evicting >= 0) {
        const policy = policies[evicting]
        const { host, port } = (servers[evicting] as (typeof servers)[number]).options
        const where = servers[0] === this.client ? '' : ` on node ${host}:${port}`
        const refused =
          `Redis evicts keys (maxmemory-policy ${policy}${where}); BullMQ needs maxmemory-policy noeviction, ` +
          'or locks and jobs disappear. Set it in redis.conf or with CONFIG SET maxmemory-policy noeviction.'
        // Said once, not at every reconnection to the same Redis.
        if (refused !== this.#refused) this.log.error(refused)
        this.#refused = refused
        return
      }
      this.#refused = null
      await this.queues.register()
      if (infos.some((info) => /^aof_enabled:0/m.test(info)) && !this.#aofWarned) {
        this.#aofWarned = true
        this.log.warn(
          'Redis has AOF off (appendonly no): a redis-server crash loses jobs since its last snapshot; ' +
            'set appendonly yes with appendfsync everysec',
        )
      }
    } catch (error) {
      this.log.warn({ err: error }, 'could not read Redis INFO')
    }
  }

  /** Connected, set up and accepted: BullMQ may be called without waiting for a connection. */
  usable(): void {
    if (
      this.client.status !== 'ready' ||
      this.bullClient.status !== 'ready' ||
      !this.#initialised ||
      this.#refused !== null
    ) {
      throw new StoreUnavailableError('Redis is not connected.')
    }
  }

  /** What a call whose Redis commands failed throws (ours pass as they are). */
  failure(error: unknown): Error {
    return storeFailure(error, 'Redis failed.')
  }

  /** Runs `work` once Redis is usable; its failures are the store's (see failure). */
  async guard<T>(work: () => Promise<T>): Promise<T> {
    this.usable()
    try {
      return await work()
    } catch (error) {
      throw this.failure(error)
    }
  }

  /** Answers whether both connections reach the deployment's keys within a second (readiness). */
  async ping(): Promise<boolean> {
    try {
      this.usable()
      let timer: NodeJS.Timeout | undefined
      const answer = await Promise.race([
        Promise.all(
          [this.client, this.bullClient].map((client) => pingHolder(client, this.key('algorithms'))),
        ),
        new Promise((resolve) => (timer = setTimeout(resolve, 1000, 'late'))),
      ])
      clearTimeout(timer)
      return Array.isArray(answer) && answer.every(Boolean)
    } catch {
      return false
    }
  }

  /** A key of our own beside BullMQ's, under the same prefix. */
  key(name: string): string {
    return `${this.settings.prefix}:algoserve:${name}`
  }

  /** A connection of its own that waits for Redis however long it is away (BullMQ's advice). */
  #waitingConnection(): RedisClient {
    const connection = connect(this.settings, { maxRetriesPerRequest: null, retryStrategy })
    connection.on('error', (error) => this.log.debug({ err: error }, 'redis worker connection error'))
    this.#waiting.push(connection)
    return connection
  }

  /**
   * A Worker on `queue` with our locks (a job whose worker died runs again, up to MAX_LOST_RUNS); without
   * `process`, one that only takes what it is asked for (getNextJob). Its errors go to `log`. The signal
   * given to `process` aborts when the job is cancelled, its lock is lost, or `shutdown` aborts.
   */
  worker<D, R>(
    queue: string,
    concurrency: number,
    process: Processor<D, R> | null,
    settings: Partial<WorkerOptions>,
    log: FastifyBaseLogger,
    shutdown?: AbortSignal,
  ): Worker<D, R> {
    const locks = new LockWatch(this.settings.lockMs, log)
    const worker = new Worker<D, R>(
      queue,
      process === null
        ? null
        : async (job, token, signal) => {
            const lock = locks.watch(job.id as string, [signal, shutdown])
            // Its lock lost, the job is another worker's: nothing of this run is told to BullMQ.
            try {
              const result = await process(job, token, lock.signal)
              if (lock.lost()) throw new WaitingError()
              return result
            } catch (error) {
              throw lock.lost() ? new WaitingError() : error
            } finally {
              lock.end()
            }
          },
      {
        ...settings,
        connection: this.#waitingConnection(),
        prefix: this.settings.prefix,
        concurrency,
        lockDuration: this.settings.lockMs,
        stalledInterval: this.settings.lockMs,
        maxStalledCount: MAX_LOST_RUNS,
      },
    )
    worker.on('error', (error) => {
      // While Redis is away every retry fails to connect: that is the readiness check's to tell.
      const away = this.outage.down || CONNECTION_ERRORS.has((error as { code?: string }).code ?? '')
      const level = away ? 'debug' : 'warn'
      log[level]({ err: error, queue }, 'redis worker error')
    })
    locks.follow(worker as Worker)
    this.#workers.push(worker as Worker)
    return worker
  }

  /** A QueueEvents of this process on queue (or event stream) `name`, with a connection of its own. */
  queueEvents(name: string): QueueEvents {
    const events = new QueueEvents(name, {
      connection: this.#waitingConnection(),
      prefix: this.settings.prefix,
    })
    events.on('error', (error) => this.log.debug({ err: error, queue: name }, 'redis queue events error'))
    this.#events.push(events)
    return events
  }

  /** The producer of our own events on the CONTROL stream. */
  controlProducer(): QueueEventsProducer {
    const producer = new QueueEventsProducer(CONTROL, {
      connection: this.bullClient,
      prefix: this.settings.prefix,
    })
    // Without a listener, BullMQ prints each of its connection's errors to stderr.
    producer.on('error', (error) => this.log.debug({ err: error }, 'redis queue events producer error'))
    this.#events.push(producer)
    return producer
  }

  /**
   * Closes everything; workers still running are closed at once (consumers are stopped first,
   * normally). BullMQ's closes wait for Redis, and a close that does not end in CLOSE_WAIT_MS (Redis
   * away) is left behind: the connections are cut either way.
   */
  async close(): Promise<void> {
    this.outage.stop()
    await settledWithin(
      CLOSE_WAIT_MS,
      this.#workers.map((worker) => worker.close(true)),
    )
    await settledWithin(CLOSE_WAIT_MS, [
      ...this.queues.opened().map((queue) => queue.close()),
      this.webhooks.close(),
      this.flows.close(),
      ...this.#events.map((events) => events.close()),
    ])
    for (const connection of [this.client, this.bullClient, ...this.#waiting]) connection.disconnect()
  }
}

/** Resolves once every promise has settled, or after `ms`, whichever is first. */
export async function settledWithin(
  ms: number,
  promises: Array<Promise<unknown> | undefined>,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    Promise.allSettled(promises),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms)
    }),
  ])
  clearTimeout(timer)
}

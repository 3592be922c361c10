// What every process hears of the others, through BullMQ's QueueEvents, made at the first need: cancels
// (to stop a run wherever it runs), on our own event stream, and job ends (for waiters and cancels) and
// other changes (starts, give-backs, progress: for streams of job events), on the queue of each
// algorithm version this process loads (from a reload on, those it loads since too).
import { EventEmitter } from 'node:events'
import type { QueueEvents, QueueEventsProducer } from 'bullmq'
import { CONTROL, type RedisConnections } from './connections.js'
import { jobQueueName } from './queues.js'

/** The custom event (on our own event stream) asking every process to stop a job's run. */
const CANCEL_EVENT = 'algoserve-cancel'
/** How long a process remembers a cancel asked of a job, for a run that starts just after it. */
const CANCEL_MEMORY_MS = 10_000

export class JobEvents {
  readonly #redis: RedisConnections
  #control: QueueEvents | undefined
  #ends: Map<string, QueueEvents> | undefined
  #producer: QueueEventsProducer | undefined
  readonly #ended = new EventEmitter().setMaxListeners(0)
  // Cancels asked, by job id (with when): a run that starts just after one is still stopped.
  readonly #cancels = new Map<string, number>()
  /** Stops this process's run of a job, if it has one (set by the jobs' consumer). */
  stopRun: ((id: string) => void) | undefined

  constructor(redis: RedisConnections) {
    this.#redis = redis
  }

  /** Calls `listener` with the id of a job that may have ended, in any process. */
  onEnded(listener: (id: string) => void): void {
    this.#ended.on('ended', listener)
  }

  /** Calls `listener` with the id of a job that may have changed (ends included), in any process. */
  onChanged(listener: (id: string) => void): void {
    this.#ended.on('changed', listener)
  }

  offEnded(listener: (id: string) => void): void {
    this.#ended.off('ended', listener)
  }

  /** Whether a cancel of job `id` was heard lately. */
  cancelled(id: string): boolean {
    return this.#cancels.has(id)
  }

  /** Asks every process (this one too) to stop job `id`'s run. */
  async cancel(id: string): Promise<void> {
    await this.subscribe()
    this.#producer ??= this.#redis.controlProducer()
    await this.#producer.publishEvent({ eventName: CANCEL_EVENT, jobId: id }, 10_000)
  }

  /** Starts listening to job ends, and to cancels (once per process). */
  async subscribe(): Promise<void> {
    if (this.#ends === undefined) {
      this.#ends = new Map()
      this.#hear(this.#redis.settings.versions)
    }
    await Promise.all([
      this.subscribeCancels(),
      ...[...this.#ends.values()].map((events) => events.waitUntilReady()),
    ])
  }

  /** Hears the queues of versions loaded since (a reload), once subscribed. */
  follow(keys: readonly string[]): void {
    if (this.#ends !== undefined) this.#hear(keys)
  }

  #hear(keys: readonly string[]): void {
    const ends = this.#ends as Map<string, QueueEvents>
    const ended = ({ jobId }: { jobId: string }) => {
      this.#ended.emit('ended', jobId)
      this.#ended.emit('changed', jobId)
    }
    const changed = ({ jobId }: { jobId: string }) => this.#ended.emit('changed', jobId)
    for (const key of keys) {
      if (ends.has(key)) continue
      const events = this.#redis.queueEvents(jobQueueName(key))
      events.on('completed', ended)
      events.on('failed', ended)
      // A job taken, given back (or retried after a lost run), or its progress stored.
      events.on('active', changed)
      events.on('waiting', changed)
      events.on('progress', changed)
      events.on('stalled', changed)
      ends.set(key, events)
    }
  }

  /** Starts listening to cancels only (what a worker needs; once per process). */
  async subscribeCancels(): Promise<void> {
    if (this.#control === undefined) {
      const events = this.#redis.queueEvents(CONTROL)
      events.on(CANCEL_EVENT as 'completed', ({ jobId }: { jobId: string }) => {
        this.#cancels.set(jobId, Date.now())
        this.stopRun?.(jobId)
        // A pending job reads as failed from the cancel on: its waiters look again.
        this.#ended.emit('ended', jobId)
        this.#ended.emit('changed', jobId)
        for (const [id, at] of this.#cancels) if (at < Date.now() - CANCEL_MEMORY_MS) this.#cancels.delete(id)
      })
      this.#control = events
    }
    await this.#control.waitUntilReady()
  }
}

// What every process hears of the others, through one QueueEvents on the jobs queue, made at the first
// need: job ends (for waiters and cancels) and cancels (to stop a run wherever it runs).
import { EventEmitter } from 'node:events'
import type { QueueEvents, QueueEventsProducer } from 'bullmq'
import type { RedisConnections } from './connections.js'

/** The custom event (on the jobs queue's event stream) asking every process to stop a job's run. */
const CANCEL_EVENT = 'algoserve-cancel'
/** How long a process remembers a cancel asked of a job, for a run that starts just after it. */
const CANCEL_MEMORY_MS = 10_000

export class JobEvents {
  readonly #redis: RedisConnections
  #events: QueueEvents | undefined
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
    await (this.#producer as QueueEventsProducer).publishEvent({ eventName: CANCEL_EVENT, jobId: id }, 10_000)
  }

  /** Starts listening (once per process). */
  async subscribe(): Promise<void> {
    if (this.#events === undefined) {
      const { events, producer } = this.#redis.jobEvents()
      const ended = ({ jobId }: { jobId: string }) => this.#ended.emit('ended', jobId)
      events.on('completed', ended)
      events.on('failed', ended)
      events.on(CANCEL_EVENT as 'completed', ({ jobId }: { jobId: string }) => {
        this.#cancels.set(jobId, Date.now())
        this.stopRun?.(jobId)
        // A pending job reads as failed from the cancel on: its waiters look again.
        this.#ended.emit('ended', jobId)
        for (const [id, at] of this.#cancels) if (at < Date.now() - CANCEL_MEMORY_MS) this.#cancels.delete(id)
      })
      this.#events = events
      this.#producer = producer
    }
    await this.#events.waitUntilReady()
  }
}

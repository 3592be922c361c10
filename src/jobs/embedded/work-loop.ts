// The loop shared by the embedded job runner and webhook dispatcher: take a batch of work from the
// store when woken (or every POLL_MS), handle each item without waiting for it, and at a shutdown stop
// taking, give the items in flight a grace period, then abort them.
import type { FastifyBaseLogger } from 'fastify'
import { ShutdownAbort } from '../../errors.js'

/** How often to look for work when nothing wakes the loop (a retry falling due is waited for itself). */
const POLL_MS = 1000

export interface Batch<T> {
  items: T[]
  /** More may be ready now: take again at once. */
  more: boolean
  /** When the next item falls due (unix ms), if sooner than the poll. */
  nextAt?: number | null
}

export abstract class WorkLoop<T extends { id: string }> {
  protected readonly log: FastifyBaseLogger
  readonly #inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>()
  #stopping = false
  #started = false
  #taking = false
  #again = false
  #timer: NodeJS.Timeout | undefined

  constructor(log: FastifyBaseLogger) {
    this.log = log
  }

  /** Takes the next batch; `inFlight` items are being handled. Errors are the subclass's to log. */
  protected abstract take(inFlight: number): Promise<Batch<T>>
  /** Handles one item; `signal` aborts at the end of a shutdown's grace period. */
  protected abstract handle(item: T, signal: AbortSignal): Promise<void>

  start(): void {
    this.#started = true
    this.notify()
  }

  /** Started and not stopping. */
  get running(): boolean {
    return this.#started && !this.#stopping
  }

  /** Something may be ready (new work, or a slot freed): take at the next turn of the event loop. */
  notify(): void {
    this.#wake(setImmediate)
  }

  /**
   * New work is committed: take it in this turn, once the current callbacks are done, rather than after the
   * next turn's requests, where a new job would wait for all of them.
   */
  notifyCommitted(): void {
    this.#wake(queueMicrotask)
  }

  #wake(soon: (take: () => void) => unknown): void {
    if (this.#stopping) return
    if (this.#taking) {
      this.#again = true
      return
    }
    this.#taking = true
    soon(() => void this.#takeAndStart())
  }

  /**
   * Aborts the handling of item `id` with `reason` (its signal's, as a shutdown's is); gives a promise that
   * resolves once its handler is done, or null when it is not in flight.
   */
  protected abortItem(id: string, reason: unknown): Promise<void> | null {
    const entry = this.#inFlight.get(id)
    if (entry === undefined) return null
    entry.controller.abort(reason)
    return entry.done
  }

  /** Stops taking; items still in flight after `graceMs` are aborted, and their handlers awaited. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true
    clearTimeout(this.#timer)
    const all = () => Promise.all([...this.#inFlight.values()].map((entry) => entry.done))
    let grace: NodeJS.Timeout | undefined
    await Promise.race([all(), new Promise((resolve) => (grace = setTimeout(resolve, graceMs)))])
    clearTimeout(grace)
    for (const entry of this.#inFlight.values()) entry.controller.abort(new ShutdownAbort('shutting down'))
    await all()
  }

  async #takeAndStart(): Promise<void> {
    clearTimeout(this.#timer)
    const batch: Batch<T> = this.#stopping ? { items: [], more: false } : await this.take(this.#inFlight.size)
    for (const item of batch.items) {
      const controller = new AbortController()
      const done = this.handle(item, controller.signal)
        .catch((error: unknown) => this.log.error({ err: error, id: item.id }, 'background work failed'))
        .finally(() => {
          this.#inFlight.delete(item.id)
          this.notify()
        })
      this.#inFlight.set(item.id, { controller, done })
    }
    this.#taking = false
    if (this.#stopping) return
    if (this.#again || batch.more) {
      this.#again = false
      this.notify()
      return
    }
    const due = batch.nextAt == null ? POLL_MS : Math.max(0, batch.nextAt - Date.now())
    this.#timer = setTimeout(() => this.notify(), Math.min(POLL_MS, due))
    this.#timer.unref()
  }
}

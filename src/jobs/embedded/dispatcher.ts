// The embedded webhook dispatcher: sends the deliveries the SQLite store holds when they are due, many
// at once, so a slow or dead receiver holds only its own deliveries; and at most a share of the
// attempts in flight go to one receiver (origin), so that one that hangs or fails cannot hold every
// slot while another receiver's delivery waits. What each attempt means is `policy.ts`'s to decide.
import type { FastifyBaseLogger } from 'fastify'
import { OriginShare, SHARE_DEFER_MS, shareOf } from '../../webhooks/origin-share.js'
import { attemptStatus, decide, logDecision } from '../../webhooks/policy.js'
import type { AttemptDelivery, AttemptStatus } from '../backend.js'
import { attemptRecord } from '../deliveries.js'
import type { Delivery, DeliveryOutcome, JobStore } from './store.js'
import { type Batch, WorkLoop } from './work-loop.js'

export interface DispatcherOptions {
  store: JobStore
  attempt: AttemptDelivery
  log: FastifyBaseLogger
  /** Waits before each retry; their count is the number of retries. */
  retryWaitsMs: readonly number[]
  /** Attempts in flight at once. */
  maxInFlight: number
  onAttempt(status: AttemptStatus): void
  /** Attempts in flight at once to one receiver origin (scheme, host and port). */
  maxPerOrigin?: number
  /** How long a delivery whose receiver has its share in flight waits before it is taken again, in ms. */
  deferMs?: number
  /** How often to look for due deliveries when nothing wakes the dispatcher, in ms. */
  pollMs?: number
}

export class WebhookDispatcher extends WorkLoop<Delivery> {
  readonly #o: DispatcherOptions
  readonly #share: OriginShare
  readonly #deferMs: number

  constructor(options: DispatcherOptions) {
    super(options.log, options.pollMs ?? 1000)
    this.#o = options
    this.#share = new OriginShare(options.maxPerOrigin ?? shareOf(options.maxInFlight))
    this.#deferMs = options.deferMs ?? SHARE_DEFER_MS
  }

  protected async take(inFlight: number): Promise<Batch<Delivery>> {
    const free = this.#o.maxInFlight - inFlight
    try {
      const now = Date.now()
      const claimed = await this.#o.store.claimDeliveries(free, now)
      const items: Delivery[] = []
      for (const delivery of claimed) {
        if (this.#share.take(delivery.url)) {
          items.push(delivery)
        } else {
          // Later, so that the deliveries due behind it (to other receivers) are taken first.
          await this.#o.store.settleDelivery(
            delivery.id,
            { kind: 'released', nextAt: now + this.#deferMs },
            now,
          )
        }
      }
      const more = free > 0 && claimed.length === free
      return { items, more: more && items.length > 0, nextAt: await this.#o.store.nextDeliveryAt() }
    } catch (error) {
      this.log.error({ err: error }, 'could not read webhook deliveries')
      return { items: [], more: false }
    }
  }

  protected async handle(delivery: Delivery, signal: AbortSignal): Promise<void> {
    try {
      await this.#attempt(delivery, signal)
    } finally {
      this.#share.release(delivery.url)
    }
  }

  async #attempt(delivery: Delivery, signal: AbortSignal): Promise<void> {
    const startedAt = Date.now()
    const started = performance.now()
    const result = await this.#o.attempt(delivery, signal)
    const durationMs = performance.now() - started
    const decision = decide(result, delivery.attempts, this.#o.retryWaitsMs)
    const status = attemptStatus(decision)
    if (status !== null) this.#o.onAttempt(status)
    const context = { job_id: delivery.jobId, webhook_id: delivery.id, attempt: delivery.attempts }
    logDecision(this.log, context, decision)
    const now = Date.now()
    const nextAt = decision.kind === 'retry' ? now + decision.waitMs : null
    const record = attemptRecord(result, delivery.attempts, startedAt, durationMs, nextAt)
    const outcome: DeliveryOutcome =
      decision.kind === 'retry'
        ? { kind: 'retry', nextAt: now + decision.waitMs, error: decision.error, record }
        : decision.kind === 'released'
          ? decision
          : { ...decision, record }
    try {
      await this.#o.store.settleDelivery(delivery.id, outcome, now)
    } catch (error) {
      this.log.error(
        { err: error, ...context },
        'could not record a webhook attempt; it is sent again at restart',
      )
    }
  }
}

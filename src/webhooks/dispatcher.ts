// The embedded webhook dispatcher: sends the deliveries the SQLite store holds when they are due, many
// at once, so a slow or dead receiver holds only its own delivery. What each attempt means is
// `policy.ts`'s to decide.
import type { FastifyBaseLogger } from 'fastify'
import type { AttemptDelivery, AttemptStatus } from '../jobs/backend.js'
import type { Delivery, DeliveryOutcome, JobStore } from '../jobs/store.js'
import { type Batch, WorkLoop } from '../jobs/work-loop.js'
import { attemptStatus, decide, logDecision } from './policy.js'

export interface DispatcherOptions {
  store: JobStore
  attempt: AttemptDelivery
  log: FastifyBaseLogger
  /** Waits before each retry; their count is the number of retries. */
  retryWaitsMs: readonly number[]
  /** Attempts in flight at once. */
  maxInFlight: number
  onAttempt(status: AttemptStatus): void
  /** How often to look for due deliveries when nothing wakes the dispatcher, in ms. */
  pollMs?: number
}

export class WebhookDispatcher extends WorkLoop<Delivery> {
  readonly #o: DispatcherOptions

  constructor(options: DispatcherOptions) {
    super(options.log, options.pollMs ?? 1000)
    this.#o = options
  }

  protected async take(inFlight: number): Promise<Batch<Delivery>> {
    const free = this.#o.maxInFlight - inFlight
    try {
      const items = await this.#o.store.claimDeliveries(free, Date.now())
      return { items, more: free > 0 && items.length === free, nextAt: await this.#o.store.nextDeliveryAt() }
    } catch (error) {
      this.log.error({ err: error }, 'could not read webhook deliveries')
      return { items: [], more: false }
    }
  }

  protected async handle(delivery: Delivery, signal: AbortSignal): Promise<void> {
    const result = await this.#o.attempt(delivery, signal)
    const decision = decide(result, delivery.attempts, this.#o.retryWaitsMs)
    const status = attemptStatus(decision)
    if (status !== null) this.#o.onAttempt(status)
    const context = { job_id: delivery.jobId, webhook_id: delivery.id, attempt: delivery.attempts }
    logDecision(this.log, context, decision)
    const now = Date.now()
    const outcome: DeliveryOutcome =
      decision.kind === 'retry'
        ? { kind: 'retry', nextAt: now + decision.waitMs, error: decision.error }
        : decision
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

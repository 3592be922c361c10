// Sends the webhook deliveries the store holds when they are due, many at once, so a slow or dead
// receiver holds only its own deliveries; and at most a share of the attempts in flight go to one
// receiver (origin), so that one that hangs or fails cannot hold every slot while another receiver's
// delivery waits. Decides after each attempt: delivered, retried after the next wait, or given up
// (decisions.md, Webhooks).
import type { FastifyBaseLogger } from 'fastify'
import type { Delivery, DeliveryOutcome, JobStore } from '../jobs/store.js'
import { type Batch, WorkLoop } from '../jobs/work-loop.js'
import type { Metrics } from '../metrics/metrics.js'
import type { WebhookSender } from './sender.js'

/** The contract's waits before the 1st, 2nd and 3rd retry. */
const RETRY_WAITS_MS: readonly number[] = [1000, 5000, 15_000]

export interface DispatcherOptions {
  store: JobStore
  sender: WebhookSender
  metrics: Metrics
  log: FastifyBaseLogger
  /** Waits before each retry; their count is the number of retries. */
  retryWaitsMs?: readonly number[]
  /** Attempts in flight at once. */
  maxInFlight?: number
  /** Attempts in flight at once to one receiver origin (scheme, host and port). */
  maxPerOrigin?: number
  /** How long a delivery whose receiver has its share in flight waits before it is taken again, in ms. */
  deferMs?: number
  /** How often to look for due deliveries when nothing wakes the dispatcher, in ms. */
  pollMs?: number
}

export class WebhookDispatcher extends WorkLoop<Delivery> {
  readonly #o: DispatcherOptions
  readonly #waits: readonly number[]
  readonly #maxInFlight: number
  readonly #maxPerOrigin: number
  readonly #deferMs: number
  readonly #perOrigin = new Map<string, number>()

  constructor(options: DispatcherOptions) {
    super(options.log, options.pollMs ?? 1000)
    this.#o = options
    this.#waits = options.retryWaitsMs ?? RETRY_WAITS_MS
    this.#maxInFlight = options.maxInFlight ?? 256
    this.#maxPerOrigin = options.maxPerOrigin ?? Math.max(1, Math.floor(this.#maxInFlight / 16))
    this.#deferMs = options.deferMs ?? 1000
  }

  protected async take(inFlight: number): Promise<Batch<Delivery>> {
    const free = this.#maxInFlight - inFlight
    try {
      const now = Date.now()
      const claimed = await this.#o.store.claimDeliveries(free, now)
      const items: Delivery[] = []
      for (const delivery of claimed) {
        const origin = originOf(delivery.url)
        const sending = this.#perOrigin.get(origin) ?? 0
        if (sending < this.#maxPerOrigin) {
          this.#perOrigin.set(origin, sending + 1)
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
      const origin = originOf(delivery.url)
      const sending = (this.#perOrigin.get(origin) ?? 1) - 1
      if (sending > 0) this.#perOrigin.set(origin, sending)
      else this.#perOrigin.delete(origin)
    }
  }

  async #attempt(delivery: Delivery, signal: AbortSignal): Promise<void> {
    const { store, sender, metrics } = this.#o
    const result = await sender.send(delivery, signal)
    const retriesLeft = delivery.attempts <= this.#waits.length
    let outcome: DeliveryOutcome
    switch (result.kind) {
      case 'success':
        outcome = { kind: 'delivered' }
        break
      case 'gone':
        outcome = { kind: 'failed', error: 'the receiver answered 410 Gone' }
        break
      case 'refused':
        outcome = { kind: 'failed', error: result.error }
        break
      case 'aborted':
        outcome = { kind: 'released' }
        break
      case 'failure':
        outcome = retriesLeft
          ? {
              kind: 'retry',
              nextAt: Date.now() + (this.#waits[delivery.attempts - 1] as number),
              error: result.error,
            }
          : { kind: 'failed', error: result.error }
        break
    }
    const context = { job_id: delivery.jobId, webhook_id: delivery.id, attempt: delivery.attempts }
    if (outcome.kind === 'delivered') metrics.webhookDeliveries.inc({ status: 'success' })
    else if (outcome.kind === 'retry') metrics.webhookDeliveries.inc({ status: 'retry' })
    else if (outcome.kind === 'failed') metrics.webhookDeliveries.inc({ status: 'failed' })
    if (outcome.kind === 'retry')
      this.log.info({ ...context, reason: outcome.error }, 'webhook attempt failed')
    if (outcome.kind === 'failed') this.log.warn({ ...context, reason: outcome.error }, 'webhook given up')
    try {
      await store.settleDelivery(delivery.id, outcome, Date.now())
    } catch (error) {
      this.log.error(
        { err: error, ...context },
        'could not record a webhook attempt; it is sent again at restart',
      )
    }
  }
}

/** The receiver a URL names: its origin; a URL that does not parse is its own. */
function originOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return url
  }
}

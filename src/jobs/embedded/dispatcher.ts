// The embedded webhook dispatcher: sends the deliveries the store holds when they are due, many at
// once, so a slow or dead receiver holds only its own deliveries; and at most a share of the attempts
// in flight go to one receiver (webhooks/origin-share.ts). Each attempt is webhooks/attempt.ts's; the
// store keeps what it came to.
import { type AttemptRules, attemptDelivery } from '../../webhooks/attempt.js'
import { OriginShare, SHARE_DEFER_MS } from '../../webhooks/origin-share.js'
import { newWebhookId, webhookPayload } from '../../webhooks/payload.js'
import type { JobRecord } from '../job.js'
import type { Delivery, JobStore, NewDelivery } from './store.js'
import { type Batch, WorkLoop } from './work-loop.js'

/** The delivery of a job that just ended, or null without a webhook (the store's DeliveryFactory). */
export function webhookDelivery(job: JobRecord): NewDelivery | null {
  if (job.webhook === null || job.completedAt === null) return null
  return {
    id: newWebhookId(),
    jobId: job.id,
    url: job.webhook,
    payload: webhookPayload(job, job.completedAt),
  }
}

export interface DispatcherOptions extends AttemptRules {
  store: JobStore
  /** Attempts in flight at once. */
  maxInFlight: number
}

export class WebhookDispatcher extends WorkLoop<Delivery> {
  readonly #o: DispatcherOptions
  readonly #share: OriginShare

  constructor(options: DispatcherOptions) {
    super(options.log)
    this.#o = options
    this.#share = new OriginShare(options.maxInFlight)
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
            { kind: 'deferred', nextAt: now + SHARE_DEFER_MS },
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
      const attempted = await attemptDelivery(this.#o, delivery, delivery.jobId, delivery.attempts, signal)
      await this.#o.store.settleDelivery(delivery.id, attempted, Date.now()).catch((error: unknown) => {
        const context = { job_id: delivery.jobId, webhook_id: delivery.id, attempt: delivery.attempts }
        this.log.error(
          { err: error, ...context },
          'could not record a webhook attempt; it is sent again at restart',
        )
      })
    } finally {
      this.#share.release(delivery.url)
    }
  }
}

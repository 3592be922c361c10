// The embedded webhook dispatcher: sends the deliveries the store holds when they are due, many at
// once, each receiver at its own pace (webhooks/receiver-pace.ts): deliveries to a receiver with no slot
// free are left in the store, not claimed, until it has one, so a slow or dead receiver holds only its
// own deliveries. Each attempt is webhooks/attempt.ts's; the store keeps what it came to.
import { type AttemptRules, attemptDelivery } from '../../webhooks/attempt.js'
import { newWebhookId, webhookPayload } from '../../webhooks/payload.js'
import type { ReceiverPace } from '../../webhooks/receiver-pace.js'
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
    trace: job.trace,
  }
}

export interface DispatcherOptions extends AttemptRules {
  store: JobStore
  /** Attempts in flight (or waiting for their receiver's slot) at once. */
  maxInFlight: number
  pace: ReceiverPace
}

export class WebhookDispatcher extends WorkLoop<Delivery> {
  readonly #o: DispatcherOptions

  constructor(options: DispatcherOptions) {
    super(options.log)
    this.#o = options
    options.pace.onFreed(() => this.notify())
  }

  protected async take(inFlight: number): Promise<Batch<Delivery>> {
    const free = this.#o.maxInFlight - inFlight
    try {
      const full = this.#o.pace.full()
      const items = await this.#o.store.claimDeliveries(free, Date.now(), full)
      const more = free > 0 && items.length === free
      return { items, more, nextAt: await this.#o.store.nextDeliveryAt(full) }
    } catch (error) {
      this.log.error({ err: error }, 'could not read webhook deliveries')
      return { items: [], more: false }
    }
  }

  protected async handle(delivery: Delivery, signal: AbortSignal): Promise<void> {
    const pace = this.#o.pace
    if (!(await pace.take(delivery.url))) {
      // Its receiver is full: back in line where it was, taken again once the receiver has room (the
      // claims leave it until then).
      await this.#settle(delivery, { kind: 'deferred', nextAt: delivery.dueAt })
      return
    }
    const { retryWaitsMs, log, onAttempt } = this.#o
    const attempted = await pace.hold(delivery.url, this.#o.send, (send) =>
      attemptDelivery(
        { send, retryWaitsMs, log, onAttempt },
        delivery,
        delivery.jobId,
        delivery.attempts,
        signal,
      ),
    )
    await this.#settle(delivery, attempted)
  }

  #settle(delivery: Delivery, outcome: Parameters<JobStore['settleDelivery']>[1]): Promise<void> {
    return this.#o.store.settleDelivery(delivery.id, outcome, Date.now()).catch((error: unknown) => {
      const context = { job_id: delivery.jobId, webhook_id: delivery.id, attempt: delivery.attempts }
      this.log.error(
        { err: error, ...context },
        'could not record a webhook attempt; it is sent again at restart',
      )
    })
  }
}

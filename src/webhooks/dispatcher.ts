// Sends the webhook deliveries the store holds when they are due, many at once, so a slow or dead
// receiver holds only its own delivery. Decides after each attempt: delivered, retried after the next
// wait, or given up (decisions.md, Webhooks).
import type { FastifyBaseLogger } from 'fastify'
import type { Delivery, DeliveryOutcome, JobStore } from '../jobs/store.js'
import type { Metrics } from '../metrics.js'
import type { WebhookSender } from './sender.js'

/** The contract's waits before the 1st, 2nd and 3rd retry. */
export const RETRY_WAITS_MS: readonly number[] = [1000, 5000, 15_000]

export interface DispatcherOptions {
  store: JobStore
  sender: WebhookSender
  metrics: Metrics
  log: FastifyBaseLogger
  /** Waits before each retry; their count is the number of retries. */
  retryWaitsMs?: readonly number[]
  /** Attempts in flight at once. */
  maxInFlight?: number
  /** How often to look for due deliveries when nothing wakes the dispatcher, in ms. */
  pollMs?: number
}

export class WebhookDispatcher {
  readonly #o: DispatcherOptions
  readonly #waits: readonly number[]
  readonly #maxInFlight: number
  readonly #inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>()
  #stopping = false
  #pumping = false
  #again = false
  #timer: NodeJS.Timeout | undefined

  constructor(options: DispatcherOptions) {
    this.#o = options
    this.#waits = options.retryWaitsMs ?? RETRY_WAITS_MS
    this.#maxInFlight = options.maxInFlight ?? 256
  }

  start(): void {
    this.notify()
  }

  /** A delivery was scheduled, or an attempt ended: look for due deliveries now. */
  notify(): void {
    if (this.#stopping) return
    if (this.#pumping) {
      this.#again = true
      return
    }
    this.#pumping = true
    setImmediate(() => void this.#pump())
  }

  /** Stops sending; attempts still going after `graceMs` are cut short and wait again in the store. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true
    clearTimeout(this.#timer)
    const all = () => Promise.all([...this.#inFlight.values()].map((a) => a.done))
    let grace: NodeJS.Timeout | undefined
    await Promise.race([all(), new Promise((resolve) => (grace = setTimeout(resolve, graceMs)))])
    clearTimeout(grace)
    for (const attempt of this.#inFlight.values()) attempt.controller.abort()
    await all()
  }

  async #pump(): Promise<void> {
    clearTimeout(this.#timer)
    const { store, log } = this.#o
    const free = this.#maxInFlight - this.#inFlight.size
    let due: Delivery[] = []
    let next: number | null = null
    try {
      if (!this.#stopping) {
        due = await store.claimDeliveries(free, Date.now())
        next = await store.nextDeliveryAt()
      }
    } catch (error) {
      log.error({ err: error }, 'could not read webhook deliveries')
    }
    for (const delivery of due) this.#send(delivery)
    this.#pumping = false
    if (this.#stopping) return
    if (this.#again || (due.length === free && free > 0)) {
      this.#again = false
      this.notify()
      return
    }
    const poll = this.#o.pollMs ?? 1000
    const wait = next === null ? poll : Math.min(poll, Math.max(0, next - Date.now()))
    this.#timer = setTimeout(() => this.notify(), wait)
    this.#timer.unref()
  }

  #send(delivery: Delivery): void {
    const controller = new AbortController()
    const done = this.#attempt(delivery, controller.signal).finally(() => {
      this.#inFlight.delete(delivery.id)
      this.notify()
    })
    this.#inFlight.set(delivery.id, { controller, done })
  }

  async #attempt(delivery: Delivery, signal: AbortSignal): Promise<void> {
    const { store, sender, metrics, log } = this.#o
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
    if (outcome.kind === 'retry') log.info({ ...context, reason: outcome.error }, 'webhook attempt failed')
    if (outcome.kind === 'failed') log.warn({ ...context, reason: outcome.error }, 'webhook given up')
    try {
      await store.settleDelivery(delivery.id, outcome, Date.now())
    } catch (error) {
      log.error({ err: error, ...context }, 'could not record a webhook attempt; it is sent again at restart')
    }
  }
}

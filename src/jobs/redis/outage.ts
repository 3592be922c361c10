// What a process says of a Redis it cannot reach: one warning when it loses Redis (the error's code and
// the address, never the URL, which may hold a password), a reminder at a bounded rate while Redis stays
// away, and one line when it is back. Every connection retries on its own and fails the same way; only
// this one speaks of it, so an outage is a few lines in the log and not one per retry and connection.
import type { FastifyBaseLogger } from 'fastify'

/** How often a process still without Redis says so again. */
export const OUTAGE_REMINDER_MS = 60_000

export class OutageLog {
  readonly #log: FastifyBaseLogger
  readonly #address: string
  readonly #reminderMs: number
  #since: number | null = null
  #code = ''
  #reminder: NodeJS.Timeout | undefined

  constructor(log: FastifyBaseLogger, address: string, reminderMs = OUTAGE_REMINDER_MS) {
    this.#log = log
    this.#address = address
    this.#reminderMs = reminderMs
  }

  /** Redis is away (or never came): warns once, then reminds every reminderMs. */
  lost(error: Error): void {
    this.#code = (error as { code?: string }).code ?? error.name
    if (this.#since !== null) return
    this.#since = Date.now()
    this.#log.warn(
      { code: this.#code, redis: this.#address },
      'Redis cannot be reached: jobs answer 503 until it can',
    )
    this.#reminder = setInterval(() => {
      this.#log.warn(
        { code: this.#code, redis: this.#address, down_ms: this.downMs() },
        'Redis still cannot be reached',
      )
    }, this.#reminderMs)
    this.#reminder.unref()
  }

  /** Redis answers again: says so if it had been lost. */
  back(): void {
    if (this.#since === null) return
    this.#log.info({ redis: this.#address, down_ms: this.downMs() }, 'Redis is reachable again')
    this.#since = null
    clearInterval(this.#reminder)
  }

  get down(): boolean {
    return this.#since !== null
  }

  downMs(): number {
    return this.#since === null ? 0 : Date.now() - this.#since
  }

  stop(): void {
    clearInterval(this.#reminder)
  }
}

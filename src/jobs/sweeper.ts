// Deletes finished jobs once their retention is over. Reads already answer 404 for an expired job;
// this keeps the store from growing.
import type { FastifyBaseLogger } from 'fastify'
import type { JobBackend } from './backend.js'

export class JobSweeper {
  readonly #backend: Pick<JobBackend, 'expire'>
  readonly #log: FastifyBaseLogger
  readonly #timer: NodeJS.Timeout

  constructor(backend: Pick<JobBackend, 'expire'>, log: FastifyBaseLogger, everyMs: number) {
    this.#backend = backend
    this.#log = log
    this.#timer = setInterval(() => void this.sweep(), everyMs)
    this.#timer.unref()
  }

  async sweep(): Promise<number> {
    try {
      const removed = await this.#backend.expire(Date.now())
      if (removed > 0) this.#log.info({ removed }, 'expired jobs removed')
      return removed
    } catch (error) {
      this.#log.error({ err: error }, 'could not remove expired jobs')
      return 0
    }
  }

  stop(): void {
    clearInterval(this.#timer)
  }
}

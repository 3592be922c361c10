// Whether a live process takes an algorithm's jobs: POST /jobs and GET /jobs/{job_id} say so when none
// does, so that a job never waits without a word. The backend's count (on Redis, its list of
// connections) is read at most once every SERVED_FOR_MS, however many requests ask, and off their way.
import type { JobBackend } from './backend.js'

export const SERVED_FOR_MS = 1000

/** What a job of `algorithm` is told while no live process takes its algorithm's jobs. */
export const unservedMessage = (algorithm: string): string =>
  `Job accepted, but no live worker takes jobs of the algorithm '${algorithm}' now: it waits until one ` +
  'does (GET /algorithms shows the workers serving each algorithm).'

export class ServedAlgorithms {
  readonly #workers: () => ReturnType<JobBackend['workers']>
  #counts: ReadonlyMap<string, number> | null = null
  #readAt = Number.NEGATIVE_INFINITY
  #reading: Promise<void> | undefined

  constructor(workers: () => ReturnType<JobBackend['workers']>) {
    this.#workers = workers
  }

  /**
   * Whether no live process takes `algorithm`'s jobs now; false when the backend cannot tell (it cannot
   * list connections, or is unreachable: the job's own answer says so). A count older than SERVED_FOR_MS
   * is read again meanwhile, and waited for only the first time: no request waits for it after that.
   */
  async unserved(algorithm: string, now = Date.now()): Promise<boolean> {
    if (now - this.#readAt >= SERVED_FOR_MS) {
      this.#reading ??= this.#workers()
        .catch(() => null)
        .then((counts) => {
          this.#counts = counts
          this.#readAt = Date.now()
          this.#reading = undefined
        })
      if (this.#readAt === Number.NEGATIVE_INFINITY) await this.#reading
    }
    return this.#counts !== null && (this.#counts.get(algorithm) ?? 0) === 0
  }
}

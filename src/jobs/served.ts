// Whether a live process takes an algorithm's jobs, and those of a job's pinned version: POST /jobs and
// GET /jobs/{job_id} say so when none does, so that a job never waits without a word. The backend's count
// (on Redis, its list of connections) is read at most once every SERVED_FOR_MS, however many requests ask,
// and off their way.
import { versionKey } from '../algorithms/registry.js'
import type { JobBackend } from './backend.js'
import { UNPINNED } from './pinned.js'

export const SERVED_FOR_MS = 1000

/** What a job of `algorithm` is told while no live process takes its algorithm's jobs. */
export const unservedMessage = (algorithm: string): string =>
  `Job accepted, but no live worker takes jobs of the algorithm '${algorithm}' now: it waits until one ` +
  'does (GET /algorithms shows the workers serving each algorithm).'

/**
 * What a job pinned to `version` is told while live processes take its algorithm's jobs, but none that
 * version's.
 */
export const unservedVersionMessage = (algorithm: string, version: string): string =>
  `Job accepted, but no live worker takes jobs of version ${version} of the algorithm '${algorithm}' now: ` +
  'it waits until one does (GET /algorithms shows the versions loaded and the workers serving them).'

export class ServedAlgorithms {
  readonly #workers: () => ReturnType<JobBackend['workers']>
  #counts: ReadonlyMap<string, number> | null = null
  #readAt = Number.NEGATIVE_INFINITY
  #reading: Promise<void> | undefined

  constructor(workers: () => ReturnType<JobBackend['workers']>) {
    this.#workers = workers
  }

  /**
   * What a job pinned to `version` of `algorithm` is told now: why it waits (no live process takes its
   * algorithm, or only other versions of it), or undefined when it does not, or when the backend cannot
   * tell (it cannot list connections, or is unreachable: the job's own answer says so). A backend that
   * counts by versionKey as well as by name counts every version that a live process has.
   */
  async waiting(algorithm: string, version: string, now = Date.now()): Promise<string | undefined> {
    const counts = await this.#read(now)
    if (counts === null) return undefined
    if ((counts.get(algorithm) ?? 0) === 0) return unservedMessage(algorithm)
    if (version === UNPINNED) return undefined
    const byVersion = counts.get(versionKey(algorithm, version))
    const counted =
      byVersion !== undefined || [...counts.keys()].some((key) => key.startsWith(`${algorithm}@`))
    return counted && (byVersion ?? 0) === 0 ? unservedVersionMessage(algorithm, version) : undefined
  }

  /**
   * The backend's counts; a count older than SERVED_FOR_MS is read again meanwhile, and waited for only
   * the first time: no request waits for it after that.
   */
  async #read(now: number): Promise<ReadonlyMap<string, number> | null> {
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
    return this.#counts
  }
}

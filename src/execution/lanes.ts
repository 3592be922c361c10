// The two waiting lines of runs for something only a few can hold at once (the worker threads, a
// process algorithm's processes): first in first out within each lane, and the lanes take turns when
// both wait. An /invoke call waits at most its bound, then gets a 503.
import { ServiceUnavailableError } from '../errors.js'

/** Who asks for the run: a synchronous /invoke call or a background job. */
export type Lane = 'invoke' | 'job'

export class Lanes<T> {
  readonly #waiting: Record<Lane, ((value: T) => void)[]> = { invoke: [], job: [] }
  #lastServed: Lane = 'job'

  /** `invokeBoundMs`: the longest wait of the invoke lane (ALGOSERVE_INVOKE_QUEUE_TIMEOUT_MS). */
  constructor(
    private readonly invokeBoundMs: number,
    private readonly what: string,
  ) {}

  get waiting(): number {
    return this.#waiting.invoke.length + this.#waiting.job.length
  }

  /** Waits in `lane` for a value handed over by `handOver`; rejects with the signal's reason or a 503. */
  wait(lane: Lane, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted()
    const line = this.#waiting[lane]
    const bound = lane === 'invoke' ? this.invokeBoundMs : Number.POSITIVE_INFINITY
    if (bound === 0) throw this.full()
    return new Promise<T>((resolve, reject) => {
      const leave = (reason: unknown) => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        line.splice(line.indexOf(take), 1)
        reject(reason)
      }
      const onAbort = () => leave(signal?.reason)
      const take = (value: T) => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        resolve(value)
      }
      const timer = Number.isFinite(bound) ? setTimeout(() => leave(this.full()), bound) : undefined
      signal?.addEventListener('abort', onAbort, { once: true })
      line.push(take)
    })
  }

  /** Gives `value` to the next waiting run, the other lane first; false when none waits. */
  handOver(value: T): boolean {
    const other: Lane = this.#lastServed === 'invoke' ? 'job' : 'invoke'
    const lane = this.#waiting[other].length > 0 ? other : this.#lastServed
    const next = this.#waiting[lane].shift()
    if (next === undefined) return false
    this.#lastServed = lane
    next(value)
    return true
  }

  /** The 503 of a full invoke lane, with the bound as Retry-After. */
  full(): ServiceUnavailableError {
    const seconds = Math.max(1, Math.ceil(this.invokeBoundMs / 1000))
    return new ServiceUnavailableError(`Every ${this.what} is busy; try again later.`, seconds)
  }
}

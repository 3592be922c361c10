// The two waiting lines of runs for something only a few can hold at once (the worker threads, a
// process algorithm's processes): the lanes take turns when both wait. The invoke lane is first in
// first out; in the job lane the algorithms take turns (the worker threads' callers name each version of
// one apart, by versionKey), first in first out within each, so that a backlog of one algorithm never puts
// another's runs behind all of it. An /invoke call waits at most its bound, then gets a 503.
import { ServiceUnavailableError } from '../errors.js'

/** Who asks for the run: a synchronous /invoke call or a background job. */
export type Lane = 'invoke' | 'job'

type Taker<T> = (value: T) => void

export class Lanes<T> {
  readonly #invoke: Taker<T>[] = []
  /** The job lane's runs by algorithm, the next to be served first (Map keeps insertion order). */
  readonly #jobs = new Map<string, Taker<T>[]>()
  #jobCount = 0
  #lastServed: Lane = 'job'

  /** `invokeBoundMs`: the longest wait of the invoke lane (ALGOSERVE_INVOKE_QUEUE_TIMEOUT_MS). */
  constructor(
    private readonly invokeBoundMs: number,
    private readonly what: string,
  ) {}

  get waiting(): number {
    return this.#invoke.length + this.#jobCount
  }

  /**
   * Waits in `lane`, as a run of `algorithm`, for a value handed over by `handOver`; rejects with the
   * signal's reason or a 503.
   */
  wait(lane: Lane, algorithm: string, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => this.enter(lane, algorithm, resolve, reject, signal))
  }

  /**
   * Queues `take` in `lane`, as a run of `algorithm`: `handOver` calls it with its value, at once, or
   * `leave` is called with the signal's reason or a 503. `first` puts it at the head of its line (a
   * run given back, which had already waited its turn); it never gets the 503, having waited already.
   */
  enter(
    lane: Lane,
    algorithm: string,
    take: Taker<T>,
    leave: (reason: unknown) => void,
    signal?: AbortSignal,
    first = false,
  ): void {
    const bound = lane === 'invoke' && !first ? this.invokeBoundMs : Number.POSITIVE_INFINITY
    if (signal?.aborted || bound === 0) {
      leave(signal?.aborted ? signal.reason : this.full())
      return
    }
    const gone = (reason: unknown) => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      this.#leave(lane, algorithm, taker)
      leave(reason)
    }
    const onAbort = () => gone(signal?.reason)
    const taker = (value: T) => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      take(value)
    }
    const timer = Number.isFinite(bound) ? setTimeout(() => gone(this.full()), bound) : undefined
    signal?.addEventListener('abort', onAbort, { once: true })
    this.#join(lane, algorithm, taker, first)
  }

  #join(lane: Lane, algorithm: string, take: Taker<T>, first: boolean): void {
    if (lane === 'invoke') {
      if (first) this.#invoke.unshift(take)
      else this.#invoke.push(take)
      return
    }
    const line = this.#jobs.get(algorithm)
    if (line === undefined) this.#jobs.set(algorithm, [take])
    else if (first) line.unshift(take)
    else line.push(take)
    this.#jobCount++
  }

  #leave(lane: Lane, algorithm: string, take: Taker<T>): void {
    if (lane === 'invoke') {
      this.#invoke.splice(this.#invoke.indexOf(take), 1)
      return
    }
    const line = this.#jobs.get(algorithm) as Taker<T>[]
    line.splice(line.indexOf(take), 1)
    if (line.length === 0) this.#jobs.delete(algorithm)
    this.#jobCount--
  }

  /** The next job run: of the algorithm whose turn it is, which then goes to the end of the turns. */
  #nextJob(): Taker<T> | undefined {
    for (const [algorithm, line] of this.#jobs) {
      const next = line.shift() as Taker<T>
      this.#jobs.delete(algorithm)
      if (line.length > 0) this.#jobs.set(algorithm, line)
      this.#jobCount--
      return next
    }
    return undefined
  }

  /** Gives `value` to the next waiting run, the other lane first; false when none waits. */
  handOver(value: T): boolean {
    const other: Lane = this.#lastServed === 'invoke' ? 'job' : 'invoke'
    const waits = (lane: Lane) => (lane === 'invoke' ? this.#invoke.length : this.#jobCount) > 0
    const lane = waits(other) ? other : this.#lastServed
    const next = lane === 'invoke' ? this.#invoke.shift() : this.#nextJob()
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

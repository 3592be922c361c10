// Runs algorithm calls: cheap ones inline, the rest on a piscina pool of worker threads, so that one
// heavy call never stalls the event loop. Counts every run in the algorithm metrics.
//
// /invoke calls and job runs share the pool through two waiting lines. When a thread frees up and
// both lines wait, they take turns: a queue of jobs never puts /invoke behind more than the runs
// already going, and a stream of /invoke calls never keeps jobs from their share of the threads.
//
// A run that has held its thread for LONG_RUN_MS is long. When every thread holds a long run, one
// more thread starts for what waits, so that a short run never waits for a long one to end: the
// operating system shares the CPUs between them. That thread stops once idle for SPARE_IDLE_MS.
import { Piscina } from 'piscina'
import type { Algorithm } from '../algorithms/algorithm.js'
import { registry } from '../algorithms/registry.js'
import { AlgorithmError, ServiceUnavailableError, WorkerLostError } from '../errors.js'
import type { Metrics } from '../metrics/metrics.js'
import type { WorkerOutcome, WorkerTask } from './pool-worker.js'
import { type TimedRun, timedRun, timedRunIfCheap } from './timed-run.js'
import { type CpuProbe, threadsFor, type UsableCpus, usableCpus } from './usable-cpus.js'

// Under tsx (tests, `npm run dev`) the sources are .ts; the build runs .js.
const WORKER_FILE = new URL(
  `./pool-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
)

const LONG_RUN_MS = 1000
const SPARE_IDLE_MS = 30_000

/** A thread taken by one run; `long` once the run has held it for LONG_RUN_MS. */
interface ThreadSlot {
  long: boolean
  timer: NodeJS.Timeout
}

export interface ExecutorOptions {
  /** Worker threads; 0 means one per usable CPU but one, which stays with the event loop. */
  threads: number
  /** Where the usable CPUs are read, when `threads` is 0 (the real cgroup files by default). */
  cpuProbe?: CpuProbe
  /** Longest wait of an /invoke run for a thread, in ms; then ServiceUnavailableError. Default: none. */
  invokeQueueTimeoutMs?: number
}

/** Who asks for the run: a synchronous /invoke call or a background job. */
export type Lane = 'invoke' | 'job'

export interface RunCallOptions {
  /** Aborts the run, or its wait for a thread. */
  signal?: AbortSignal
  lane?: Lane
}

interface AlgorithmMetrics {
  successes: { inc(): void }
  errors: { inc(): void }
  duration: { observe(seconds: number): void }
}

export class Executor {
  readonly #pool: Piscina
  readonly #metrics: Metrics
  readonly #algorithmMetrics = new Map<string, AlgorithmMetrics>()
  #closed = false
  // Runs wait here, first in first out within each lane, until a thread is free. Piscina's own queue
  // is not FIFO for abortable tasks: under load some waited seconds behind later ones (bench/http/invoke.sh,
  // 100-digit primes).
  readonly #waiting: Record<Lane, (() => void)[]> = { invoke: [], job: [] }
  #lastServed: Lane = 'job'
  #busy = 0
  /** Runs on a thread that have not yet been running for LONG_RUN_MS. */
  #shortRuns = 0
  readonly #threads: number
  readonly #invokeQueueTimeoutMs: number
  /** The CPUs the thread count was derived from, or null when it was set (ALGOSERVE_WORKER_THREADS). */
  readonly usableCpus: UsableCpus | null

  constructor(options: ExecutorOptions, metrics: Metrics) {
    this.usableCpus = options.threads > 0 ? null : usableCpus(options.cpuProbe)
    const threads = this.usableCpus === null ? options.threads : threadsFor(this.usableCpus.cpus)
    this.#metrics = metrics
    this.#invokeQueueTimeoutMs = options.invokeQueueTimeoutMs ?? Number.POSITIVE_INFINITY
    this.#threads = threads
    this.#pool = new Piscina({
      filename: WORKER_FILE.href,
      minThreads: threads,
      maxThreads: threads + 1,
      idleTimeout: SPARE_IDLE_MS,
    })
  }

  /** The worker threads kept; one more starts while every one of them holds a long run. */
  get threads(): number {
    return this.#threads
  }

  /** The pool is open and has its worker threads. */
  get alive(): boolean {
    return !this.#closed && this.#pool.threads.length > 0
  }

  /**
   * Runs one call. Rejects with the signal's reason when aborted, AlgorithmError when the algorithm
   * failed, WorkerLostError when the worker thread running it died, and ServiceUnavailableError when
   * an /invoke call waited for a thread longer than its bound.
   */
  async run(
    algorithm: Algorithm,
    params: unknown,
    budgetMs: number,
    { signal, lane = 'invoke' }: RunCallOptions = {},
  ): Promise<TimedRun> {
    let run: TimedRun
    try {
      const inline = algorithm.isCheap(params)
        ? timedRun(algorithm, params, { budgetMs, signal })
        : timedRunIfCheap(algorithm, params, { budgetMs, signal })
      if (inline !== undefined) {
        run = inline
      } else if (registry.get(algorithm.name) !== algorithm) {
        // The worker threads run the registry's algorithms, found by name: another one (a stand-in
        // given to the service) would run there as the registry's, so it is refused instead.
        throw new Error(
          `'${algorithm.name}' is not the algorithm the worker threads run: it runs only inline`,
        )
      } else {
        const slot = await this.#acquireThread(lane, signal).catch((error: unknown) => {
          // Not the algorithm's failure: no run took place.
          throw error instanceof ServiceUnavailableError ? new NotRun(error) : error
        })
        let outcome: WorkerOutcome
        try {
          const task: WorkerTask = { algorithm: algorithm.name, params, budgetMs }
          outcome = await this.#pool.run(task, signal ? { signal } : {}).catch((error: unknown) => {
            if (signal?.aborted) throw signal.reason
            throw new WorkerLostError(error)
          })
        } finally {
          this.#releaseThread(slot)
        }
        if ('failure' in outcome) throw new Error(outcome.failure)
        run = outcome
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      if (error instanceof NotRun) throw error.reason
      this.#metricsOf(algorithm).errors.inc()
      if (error instanceof WorkerLostError) throw error
      throw new AlgorithmError(algorithm.name, error)
    }
    const metrics = this.#metricsOf(algorithm)
    metrics.successes.inc()
    metrics.duration.observe(run.elapsedSeconds)
    return run
  }

  /** The algorithm's label children, looked up once: hashing the labels on every run showed in profiles. */
  #metricsOf(algorithm: Algorithm): AlgorithmMetrics {
    let metrics = this.#algorithmMetrics.get(algorithm.name)
    if (metrics === undefined) {
      const { algorithmExecutions, algorithmDuration } = this.#metrics
      metrics = {
        successes: algorithmExecutions.labels({ algorithm: algorithm.name, status: 'success' }),
        errors: algorithmExecutions.labels({ algorithm: algorithm.name, status: 'error' }),
        duration: algorithmDuration.labels({ algorithm: algorithm.name }),
      }
      this.#algorithmMetrics.set(algorithm.name, metrics)
    }
    return metrics
  }

  async #acquireThread(lane: Lane, signal?: AbortSignal): Promise<ThreadSlot> {
    signal?.throwIfAborted()
    if (this.#hasFreeThread()) return this.#take()
    const line = this.#waiting[lane]
    const bound = lane === 'invoke' ? this.#invokeQueueTimeoutMs : Number.POSITIVE_INFINITY
    if (bound === 0) throw this.#noThread()
    return new Promise<ThreadSlot>((resolve, reject) => {
      const leave = (reason: unknown) => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        line.splice(line.indexOf(start), 1)
        reject(reason)
      }
      const onAbort = () => leave(signal?.reason)
      const start = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        resolve(this.#take())
      }
      const timer = Number.isFinite(bound) ? setTimeout(() => leave(this.#noThread()), bound) : undefined
      signal?.addEventListener('abort', onAbort, { once: true })
      line.push(start)
    })
  }

  #noThread(): ServiceUnavailableError {
    const seconds = Math.max(1, Math.ceil(this.#invokeQueueTimeoutMs / 1000))
    return new ServiceUnavailableError('Every worker thread is busy; try again later.', seconds)
  }

  #hasFreeThread(): boolean {
    return this.#busy < this.#threads || (this.#busy === this.#threads && this.#shortRuns === 0)
  }

  #take(): ThreadSlot {
    this.#busy++
    this.#shortRuns++
    const slot: ThreadSlot = {
      long: false,
      timer: setTimeout(() => {
        slot.long = true
        this.#shortRuns--
        this.#startWaiting()
      }, LONG_RUN_MS),
    }
    return slot
  }

  #releaseThread(slot: ThreadSlot): void {
    clearTimeout(slot.timer)
    this.#busy--
    if (!slot.long) this.#shortRuns--
    this.#startWaiting()
  }

  #startWaiting(): void {
    while (this.#hasFreeThread()) {
      const other: Lane = this.#lastServed === 'invoke' ? 'job' : 'invoke'
      const lane = this.#waiting[other].length > 0 ? other : this.#lastServed
      const next = this.#waiting[lane].shift()
      if (next === undefined) return
      this.#lastServed = lane
      next()
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    await this.#pool.close()
  }
}

/** Carries an error that came before any run, past the accounting of failed runs. */
class NotRun {
  constructor(readonly reason: unknown) {}
}

// Runs algorithm calls: cheap ones inline, the rest on a piscina pool of worker threads, so that one
// heavy call never stalls the event loop. Counts every run in the algorithm metrics.
import { availableParallelism } from 'node:os'
import { Piscina } from 'piscina'
import type { Algorithm } from './algorithms/algorithm.js'
import type { WorkerTask } from './algorithms/worker.js'
import { AlgorithmError } from './errors.js'
import type { Metrics } from './metrics.js'
import { type TimedRun, timedRun } from './timed-run.js'

// Under tsx (tests, `npm run dev`) the sources are .ts; the build runs .js.
const WORKER_FILE = new URL(
  `./algorithms/worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
)

export interface ExecutorOptions {
  /** Worker threads; 0 means one per available core but one, which stays with the event loop. */
  threads: number
}

export class Executor {
  readonly #pool: Piscina
  readonly #metrics: Metrics
  #closed = false
  // Runs wait here, first in first out, until a thread is free. Piscina's own queue is not FIFO for
  // abortable tasks: under load some waited seconds behind later ones (bench/invoke.sh, 100-digit primes).
  readonly #waiting: (() => void)[] = []
  #busy = 0

  constructor(options: ExecutorOptions, metrics: Metrics) {
    const threads = options.threads > 0 ? options.threads : Math.max(1, availableParallelism() - 1)
    this.#metrics = metrics
    this.#pool = new Piscina({
      filename: WORKER_FILE.href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.POSITIVE_INFINITY,
    })
  }

  get threads(): number {
    return this.#pool.options.maxThreads
  }

  /** The pool is open and has its worker threads. */
  get alive(): boolean {
    return !this.#closed && this.#pool.threads.length > 0
  }

  async run(
    algorithm: Algorithm,
    params: unknown,
    budgetMs: number,
    signal?: AbortSignal,
  ): Promise<TimedRun> {
    let run: TimedRun
    try {
      if (algorithm.isCheap(params)) {
        run = timedRun(algorithm, params, { budgetMs, signal })
      } else {
        await this.#acquireThread(signal)
        try {
          const task: WorkerTask = { algorithm: algorithm.name, params, budgetMs }
          run = await this.#pool.run(task, signal ? { signal } : {})
        } finally {
          this.#releaseThread()
        }
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      this.#metrics.algorithmExecutions.inc({ algorithm: algorithm.name, status: 'error' })
      throw new AlgorithmError(algorithm.name, error)
    }
    this.#metrics.algorithmExecutions.inc({ algorithm: algorithm.name, status: 'success' })
    this.#metrics.algorithmDuration.observe({ algorithm: algorithm.name }, run.elapsedSeconds)
    return run
  }

  async #acquireThread(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted()
    if (this.#busy < this.threads) {
      this.#busy++
      return
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#waiting.splice(this.#waiting.indexOf(start), 1)
        reject(signal?.reason)
      }
      const start = () => {
        signal?.removeEventListener('abort', onAbort)
        this.#busy++
        resolve()
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiting.push(start)
    })
  }

  #releaseThread(): void {
    this.#busy--
    this.#waiting.shift()?.()
  }

  async close(): Promise<void> {
    this.#closed = true
    await this.#pool.close()
  }
}

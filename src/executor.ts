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
        const task: WorkerTask = { algorithm: algorithm.name, params, budgetMs }
        run = await this.#pool.run(task, signal ? { signal } : {})
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

  async close(): Promise<void> {
    this.#closed = true
    await this.#pool.close()
  }
}

// Runs algorithm calls, each the way its algorithm is run (run-way.ts): a process algorithm's on its
// processes (process-pool.ts), a module's on the worker threads (worker-threads.ts), so that one heavy
// call never stalls the event loop, and the calls a built-in module finds cheap on the event loop
// (inline-way.ts). Counts every run in the algorithm metrics, whichever way ran it.
import type { Algorithm, InlineRuns } from '../algorithms/algorithm.js'
import { isBuiltIn, type Registry, versionKey } from '../algorithms/registry.js'
import { AlgorithmError, AlgorithmInputError, ServiceUnavailableError } from '../errors.js'
import type { Metrics } from '../metrics/metrics.js'
import { InlineWay } from './inline-way.js'
import { fieldValue, inputRejectionOf } from './input-rejection.js'
import type { ProcessPoolSet } from './process-pool.js'
import type { RunOptions, RunWay } from './run-way.js'
import { RunFailure, type TimedRun } from './timed-run.js'
import { type CpuProbe, threadsFor, type UsableCpus, usableCpus } from './usable-cpus.js'
import { WorkerThreads, type WorkerThreadsOptions } from './worker-threads.js'

export interface ExecutorOptions extends WorkerThreadsOptions {
  /** Worker threads; 0 means one per usable CPU but one, which stays with the event loop. */
  threads: number
  /** Where the usable CPUs are read, when `threads` is 0 (the real cgroup files by default). */
  cpuProbe?: CpuProbe
  /** The processes of the process algorithms: their runs go there, and close with the executor. */
  processes?: ProcessPoolSet
}

export type { Lane } from './lanes.js'
export type { RunOptions } from './run-way.js'

interface AlgorithmMetrics {
  successes: { inc(): void }
  errors: { inc(): void }
  invalidParams: { inc(): void }
  duration: { observe(seconds: number): void }
}

export class Executor {
  readonly #threads: WorkerThreads
  readonly #metrics: Metrics
  readonly #algorithmMetrics = new Map<string, AlgorithmMetrics>()
  readonly #processes: ProcessPoolSet | undefined
  /** Each algorithm's way, chosen at its first call. */
  readonly #ways = new Map<Algorithm, RunWay>()
  /** The CPUs the thread count was derived from, or null when it was set (ALGOSERVE_WORKER_THREADS). */
  readonly usableCpus: UsableCpus | null

  constructor(options: ExecutorOptions, metrics: Metrics) {
    this.usableCpus = options.threads > 0 ? null : usableCpus(options.cpuProbe)
    const threads = this.usableCpus === null ? options.threads : threadsFor(this.usableCpus.cpus)
    this.#metrics = metrics
    this.#processes = options.processes
    this.#threads = new WorkerThreads({ ...options, threads })
  }

  /**
   * Resolves once every kept thread has loaded the algorithm modules; rejects with a ConfigError
   * naming the module when one fails to load in a thread (as a module that works only on the main
   * thread does), so that such a module stops the start rather than the first run.
   */
  warm(): Promise<void> {
    return this.#threads.warm()
  }

  /** The worker threads kept; one more starts while every one of them holds a long run. */
  get threads(): number {
    return this.#threads.threads
  }

  /**
   * After a reload: threads and process pools follow the new set; the ways of versions removed are let go
   * (a call running on one holds it until it ends).
   */
  algorithmsChanged(algorithms: Registry): void {
    const all = algorithms.all()
    this.#threads.algorithmsChanged(all.filter((one) => !isBuiltIn(one)).map((one) => one.source))
    this.#processes?.algorithmsChanged(algorithms)
    for (const algorithm of this.#ways.keys()) if (!all.includes(algorithm)) this.#ways.delete(algorithm)
  }

  /** The pool is open and has its worker threads. */
  get alive(): boolean {
    return this.#threads.alive
  }

  /**
   * Runs one call, the way of its algorithm. Rejects with the signal's reason when aborted,
   * AlgorithmInputError when the algorithm refused its params, AlgorithmError when the algorithm failed
   * (threw, broke its result schema, or its thread or process died under it), RunTimeLimitError when it ran
   * past `timeoutMs`, and ServiceUnavailableError when an /invoke call waited for a thread or a process
   * longer than its bound.
   */
  async run(algorithm: Algorithm, params: unknown, options: RunOptions): Promise<TimedRun> {
    return this.start(algorithm, params, options)
  }

  /**
   * `run`, but synchronous when the call ran on the event loop (throwing as `run` rejects), so that a
   * cheap /invoke is answered in the turn its body arrived, without promises.
   */
  start(algorithm: Algorithm, params: unknown, options: RunOptions): TimedRun | Promise<TimedRun> {
    let run: TimedRun | Promise<TimedRun>
    try {
      run = this.#wayOf(algorithm).run(params, options)
    } catch (error) {
      throw this.#failure(algorithm, params, error, options)
    }
    if (!(run instanceof Promise)) return this.#succeeded(algorithm, run)
    return run.then(
      (run) => this.#succeeded(algorithm, run),
      (error: unknown) => {
        throw this.#failure(algorithm, params, error, options)
      },
    )
  }

  /** The way of an algorithm's calls, the same for all of them. */
  #wayOf(algorithm: Algorithm): RunWay {
    let way = this.#ways.get(algorithm)
    if (way === undefined) {
      way = this.#chooseWay(algorithm)
      this.#ways.set(algorithm, way)
    }
    return way
  }

  #chooseWay(algorithm: Algorithm): RunWay {
    if (algorithm.process !== undefined) {
      const pool = this.#processes?.pool(algorithm)
      if (pool === undefined) throw new Error(`no processes for the algorithm '${algorithm.name}' here`)
      return pool
    }
    const threads = this.#threads.way(algorithm)
    return hasInline(algorithm) ? new InlineWay(algorithm, threads) : threads
  }

  #succeeded(algorithm: Algorithm, run: TimedRun): TimedRun {
    const metrics = this.#metricsOf(algorithm)
    metrics.successes.inc()
    metrics.duration.observe(run.elapsedSeconds)
    return run
  }

  /** What a failed call rejects with; a failure of the algorithm's own, or its refusal, is counted. */
  #failure(algorithm: Algorithm, params: unknown, error: unknown, options: RunOptions): unknown {
    const { signal } = options
    if (signal?.aborted) return signal.reason
    // Not the algorithm's failure: no thread or process was there for it within the bound.
    if (error instanceof ServiceUnavailableError) return error
    // The caller's fault, told as the algorithm put it, with the value of the member it named.
    const rejected = inputRejectionOf(error)
    if (rejected !== undefined) {
      this.#metricsOf(algorithm).invalidParams.inc()
      const { message, field } = rejected
      return new AlgorithmInputError(message, field ?? null, fieldValue(params, field))
    }
    this.#metricsOf(algorithm).errors.inc()
    if (error instanceof AlgorithmError) return error
    return new AlgorithmError(algorithm.name, error instanceof RunFailure ? error.message : null, error)
  }

  /** The algorithm's label children, looked up once: hashing the labels on every run showed in profiles. */
  #metricsOf(algorithm: Algorithm): AlgorithmMetrics {
    const key = versionKey(algorithm.name, algorithm.version)
    let metrics = this.#algorithmMetrics.get(key)
    if (metrics === undefined) {
      const { algorithmExecutions, algorithmDuration, versionExecutions } = this.#metrics
      const { name, version } = algorithm
      // Each run counted by name, as always, and by version beside it.
      const counted = (status: 'success' | 'error' | 'invalid_params') => {
        const byName = algorithmExecutions.labels({ algorithm: name, status })
        const byVersion = versionExecutions.labels({ algorithm: name, version, status })
        return {
          inc() {
            byName.inc()
            byVersion.inc()
          },
        }
      }
      metrics = {
        successes: counted('success'),
        errors: counted('error'),
        invalidParams: counted('invalid_params'),
        duration: algorithmDuration.labels({ algorithm: name }),
      }
      this.#algorithmMetrics.set(key, metrics)
    }
    return metrics
  }

  async close(): Promise<void> {
    await Promise.all([this.#threads.close(), this.#processes?.close()])
  }

  /**
   * GET /readyz's checks of the ways: `algorithm`, the worker threads; `process:<name>`, each process
   * algorithm's processes, false while one fails to start.
   */
  checks(): { algorithm: () => boolean; [check: string]: () => boolean } {
    return { algorithm: () => this.#threads.alive, ...this.#processes?.checks() }
  }
}

const hasInline = (algorithm: Algorithm): algorithm is Algorithm & { inline: InlineRuns } =>
  algorithm.inline !== undefined

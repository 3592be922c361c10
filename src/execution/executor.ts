// Runs algorithm calls: cheap ones inline, process algorithms' on their processes (process-pool.ts),
// the rest on the worker threads (worker-threads.ts), so that one heavy call never stalls the event
// loop. Counts every run in the algorithm metrics.
import type { Algorithm } from '../algorithms/algorithm.js'
import { AlgorithmError, ServiceUnavailableError } from '../errors.js'
import type { Metrics } from '../metrics/metrics.js'
import type { LogContext, Progress } from './algorithm-process.js'
import type { Lane } from './lanes.js'
import type { ProcessPools } from './process-pool.js'
import { ignoreProgress } from './progress.js'
import { RunFailure, type TimedRun, timedRunInline } from './timed-run.js'
import { type CpuProbe, threadsFor, type UsableCpus, usableCpus } from './usable-cpus.js'
import { WorkerThreads, type WorkerThreadsOptions } from './worker-threads.js'

export interface ExecutorOptions extends WorkerThreadsOptions {
  /** Worker threads; 0 means one per usable CPU but one, which stays with the event loop. */
  threads: number
  /** Where the usable CPUs are read, when `threads` is 0 (the real cgroup files by default). */
  cpuProbe?: CpuProbe
  /** The processes of the process algorithms: their runs go there, and close with the executor. */
  processes?: ProcessPools
}

export type { Lane } from './lanes.js'

export interface RunCallOptions {
  /** Aborts the run, or its wait for a thread. */
  signal?: AbortSignal
  lane?: Lane
  /** The hard limit of a run on a worker thread, in ms: then its thread is terminated. Default: none. */
  timeoutMs?: number
  /**
   * Told of the run's progress on this thread, when the algorithm reports it (a module's
   * `context.progress`, a process's progress lines): on a worker thread at most one update per
   * PROGRESS_INTERVAL_MS (progress.ts) and always the last one, before the run's promise settles. A
   * hook that throws does not fail the run. Without one, a run's progress costs nothing.
   */
  progress?: Progress
  /** Whom the run is for, on the log lines of a process algorithm's program (its stderr). */
  logContext?: LogContext
}

/** The signal of inline runs, which nothing aborts: they take microseconds. */
const NEVER_ABORTED = new AbortController().signal

interface AlgorithmMetrics {
  successes: { inc(): void }
  errors: { inc(): void }
  duration: { observe(seconds: number): void }
}

export class Executor {
  readonly #threads: WorkerThreads
  readonly #metrics: Metrics
  readonly #algorithmMetrics = new Map<string, AlgorithmMetrics>()
  readonly #processes: ProcessPools | undefined
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

  /** The pool is open and has its worker threads. */
  get alive(): boolean {
    return this.#threads.alive
  }

  /**
   * Runs one call. Rejects with the signal's reason when aborted, AlgorithmError when the algorithm
   * failed (threw, broke its result schema, or its worker thread died under it), RunTimeLimitError when
   * it ran past `timeoutMs`, and ServiceUnavailableError when an /invoke call waited for a thread longer
   * than its bound.
   */
  async run(
    algorithm: Algorithm,
    params: unknown,
    budgetMs: number,
    options: RunCallOptions = {},
  ): Promise<TimedRun> {
    return (
      this.runInline(algorithm, params, budgetMs, options) ??
      this.runElsewhere(algorithm, params, budgetMs, options)
    )
  }

  /**
   * The run on this thread, when the algorithm finds the call cheap (its inline shortcuts), counted and
   * failing as `run`'s; otherwise undefined, and the call is for `runElsewhere`. Synchronous, so that a
   * cheap /invoke is answered in the turn its body arrived, without the promises of `run`.
   */
  runInline(
    algorithm: Algorithm,
    params: unknown,
    budgetMs: number,
    { signal, timeoutMs }: RunCallOptions = {},
  ): TimedRun | undefined {
    let run: TimedRun | undefined
    try {
      run = timedRunInline(algorithm, params, {
        budgetMs,
        signal: signal ?? NEVER_ABORTED,
        deadline: timeoutMs === undefined ? Number.MAX_SAFE_INTEGER : Date.now() + timeoutMs,
        progress: ignoreProgress,
      })
    } catch (error) {
      throw this.#failure(algorithm, error, signal)
    }
    if (run !== undefined) this.#succeeded(algorithm, run)
    return run
  }

  /** The run of a call that runInline left: on the algorithm's processes or on a worker thread. */
  async runElsewhere(
    algorithm: Algorithm,
    params: unknown,
    budgetMs: number,
    { signal, lane = 'invoke', timeoutMs, progress, logContext }: RunCallOptions = {},
  ): Promise<TimedRun> {
    let run: TimedRun
    try {
      run = await (algorithm.process !== undefined && this.#processes !== undefined
        ? this.#processes.run(algorithm, params, { lane, signal, timeoutMs, progress, logContext })
        : this.#threads.run(algorithm, params, budgetMs, { lane, signal, timeoutMs, progress })
      ).catch((error: unknown) => {
        // Not the algorithm's failure: no process or thread was free within the bound.
        throw error instanceof ServiceUnavailableError ? new NotRun(error) : error
      })
    } catch (error) {
      throw this.#failure(algorithm, error, signal)
    }
    this.#succeeded(algorithm, run)
    return run
  }

  #succeeded(algorithm: Algorithm, run: TimedRun): void {
    const metrics = this.#metricsOf(algorithm)
    metrics.successes.inc()
    metrics.duration.observe(run.elapsedSeconds)
  }

  /** What a failed call rejects with; a failure of the algorithm's own is counted. */
  #failure(algorithm: Algorithm, error: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return signal.reason
    if (error instanceof NotRun) return error.reason
    this.#metricsOf(algorithm).errors.inc()
    if (error instanceof AlgorithmError) return error
    return new AlgorithmError(algorithm.name, error instanceof RunFailure ? error.message : null, error)
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

  async close(): Promise<void> {
    await Promise.all([this.#threads.close(), this.#processes?.close()])
  }

  /** The readiness checks of the process algorithms' processes, one per algorithm. */
  processChecks(): Record<string, () => boolean> {
    return this.#processes?.checks() ?? {}
  }
}

/** Carries an error that came before any run, past the accounting of failed runs. */
class NotRun {
  constructor(readonly reason: unknown) {}
}

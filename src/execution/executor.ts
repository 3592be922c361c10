// Runs algorithm calls: cheap ones inline, the rest on a piscina pool of worker threads, so that one
// heavy call never stalls the event loop. Runs of process algorithms go to their processes instead
// (process-pool.ts). Counts every run in the algorithm metrics.
//
// /invoke calls and job runs share the pool through two waiting lines. When a thread frees up and
// both lines wait, they take turns: a queue of jobs never puts /invoke behind more than the runs
// already going, and a stream of /invoke calls never keeps jobs from their share of the threads.
// Within the job line the algorithms take turns (lanes.ts).
//
// A run that has held its thread for LONG_RUN_MS is long. When every thread holds a long run, one
// more thread starts for what waits, so that a short run never waits for a long one to end: the
// operating system shares the CPUs between them. That thread stops once idle for SPARE_IDLE_MS.
import { MessageChannel, type MessagePort, receiveMessageOnPort, type Worker } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { Algorithm } from '../algorithms/algorithm.js'
import { AlgorithmError, ConfigError, RunTimeLimitError, ServiceUnavailableError } from '../errors.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Progress } from './algorithm-process.js'
import { type Lane, Lanes } from './lanes.js'
import type { PoolWorkerData, ThreadLoad, WorkerOutcome, WorkerTask } from './pool-worker.js'
import type { ProcessPools } from './process-pool.js'
import { ignoreProgress, type ProgressUpdate, tellProgress } from './progress.js'
import { RunFailure, type TimedRun, timedRunInline } from './timed-run.js'
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
  /** The module files of ALGOSERVE_ALGORITHMS, resolved: every worker thread loads them. */
  algorithmFiles?: string[]
  /** The heap limit of each worker thread, in MB; 0 leaves Node's default. */
  threadHeapMb?: number
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
}

/** The signal of inline runs, which nothing aborts: they take microseconds. */
const NEVER_ABORTED = new AbortController().signal

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
  readonly #lanes: Lanes<ThreadSlot>
  #busy = 0
  /** Runs on a thread that have not yet been running for LONG_RUN_MS. */
  #shortRuns = 0
  readonly #threads: number
  /** Threads terminated and not yet gone, with the promise of their exit. */
  readonly #exiting = new Set<Promise<void>>()
  readonly #processes: ProcessPools | undefined
  /** Settles once every kept thread has loaded the modules, or one could not. */
  readonly #loaded: Promise<void>
  /** The CPUs the thread count was derived from, or null when it was set (ALGOSERVE_WORKER_THREADS). */
  readonly usableCpus: UsableCpus | null

  constructor(options: ExecutorOptions, metrics: Metrics) {
    this.usableCpus = options.threads > 0 ? null : usableCpus(options.cpuProbe)
    const threads = this.usableCpus === null ? options.threads : threadsFor(this.usableCpus.cpus)
    this.#metrics = metrics
    this.#lanes = new Lanes(options.invokeQueueTimeoutMs ?? Number.POSITIVE_INFINITY, 'worker thread')
    this.#threads = threads
    this.#processes = options.processes
    const workerData: PoolWorkerData = { algorithmFiles: options.algorithmFiles ?? [] }
    this.#pool = new Piscina({
      filename: WORKER_FILE.href,
      minThreads: threads,
      maxThreads: threads + 1,
      idleTimeout: SPARE_IDLE_MS,
      // Its wait and run histograms are read by nobody here; the algorithm metrics time the runs.
      recordTiming: false,
      workerData,
      ...(options.threadHeapMb ? { resourceLimits: { maxOldGenerationSizeMb: options.threadHeapMb } } : {}),
    })
    // Piscina terminates the thread of an aborted task and starts another at once; the old one is
    // counted until it has exited, so that a run past its limit never shares the CPU with its successor.
    // A thread that ended by itself is destroyed from its 'exit' event, with its id already -1: there
    // is nothing to wait for, and a promise of an exit already past would never settle.
    this.#pool.on('workerDestroy', ({ id }: { id: number }) => {
      if (id === -1) return
      const worker = this.#pool.threads.find((thread) => thread.threadId === id) as Worker | undefined
      if (worker === undefined) return
      const gone: Promise<void> = new Promise((resolve) => worker.once('exit', () => resolve()))
      this.#exiting.add(gone)
      gone.then(() => this.#exiting.delete(gone))
    })
    // A thread that dies between tasks fails no call; piscina replaces it.
    this.#pool.on('error', () => {})
    this.#loaded = this.#watchLoading()
    // Whoever awaits warm() sees a failure; a process that never does is not stopped by it.
    this.#loaded.catch(() => {})
  }

  /**
   * Resolves once every kept thread has loaded the algorithm modules; rejects with a ConfigError
   * naming the module when one fails to load in a thread (as a module that works only on the main
   * thread does), so that such a module stops the start rather than the first run.
   */
  warm(): Promise<void> {
    return this.#loaded
  }

  /** The worker threads kept; one more starts while every one of them holds a long run. */
  get threads(): number {
    return this.#threads
  }

  /** Listens from the start: the threads load their modules while the rest of the process starts. */
  #watchLoading(): Promise<void> {
    return new Promise((resolve, reject) => {
      const loaded = new Set<number>()
      const stopWatching = () => {
        this.#pool.off('message', onMessage)
        this.#pool.off('error', onError)
      }
      const fail = (message: string) => {
        stopWatching()
        reject(new ConfigError(`A worker thread could not start: ${message}`))
      }
      const onMessage = (message: ThreadLoad | null) => {
        if (typeof message?.algoserveThreadFailed === 'string') fail(message.algoserveThreadFailed)
        if (typeof message?.algoserveThreadLoaded !== 'number') return
        loaded.add(message.algoserveThreadLoaded)
        if (loaded.size < this.#threads) return
        stopWatching()
        resolve()
      }
      const onError = (error: unknown) => fail(error instanceof Error ? error.message : String(error))
      this.#pool.on('message', onMessage)
      this.#pool.on('error', onError)
    })
  }

  /** The pool is open and has its worker threads. */
  get alive(): boolean {
    return !this.#closed && this.#pool.threads.length > 0
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
    { signal, lane = 'invoke', timeoutMs, progress }: RunCallOptions = {},
  ): Promise<TimedRun> {
    let run: TimedRun
    try {
      const deadline = timeoutMs === undefined ? Number.MAX_SAFE_INTEGER : Date.now() + timeoutMs
      run =
        timedRunInline(algorithm, params, {
          budgetMs,
          signal: signal ?? NEVER_ABORTED,
          deadline,
          progress: ignoreProgress,
        }) ??
        (algorithm.process !== undefined && this.#processes !== undefined
          ? await this.#processes
              .run(algorithm, params, { lane, signal, timeoutMs, progress })
              .catch((error: unknown) => {
                throw error instanceof ServiceUnavailableError ? new NotRun(error) : error
              })
          : await this.#runOnThread(algorithm, params, budgetMs, { lane, signal, timeoutMs, progress }))
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      if (error instanceof NotRun) throw error.reason
      this.#metricsOf(algorithm).errors.inc()
      if (error instanceof AlgorithmError) throw error
      throw new AlgorithmError(algorithm.name, error instanceof RunFailure ? error.message : null, error)
    }
    const metrics = this.#metricsOf(algorithm)
    metrics.successes.inc()
    metrics.duration.observe(run.elapsedSeconds)
    return run
  }

  async #runOnThread(
    algorithm: Algorithm,
    params: unknown,
    budgetMs: number,
    { lane = 'invoke', signal, timeoutMs, progress }: RunCallOptions,
  ): Promise<TimedRun> {
    const slot = await this.#acquireThread(lane, algorithm.name, signal).catch((error: unknown) => {
      // Not the algorithm's failure: no run took place.
      throw error instanceof ServiceUnavailableError ? new NotRun(error) : error
    })
    // One controller stops the run for either cause (AbortSignal.any costs a signal more per run).
    const stop = new AbortController()
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => stop.abort(new RunTimeLimitError(algorithm.name, timeoutMs)), timeoutMs)
    const onAbort = () => stop.abort(signal?.reason)
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
    // A port of its own per followed run: the updates reach the hook as they come, with no lookup.
    const channel = progress === undefined ? undefined : new MessageChannel()
    channel?.port1.on('message', (update: ProgressUpdate) => tellProgress(progress as Progress, update))
    let outcome: WorkerOutcome
    try {
      // The limit counts from the run's start on its thread, not from the wait for one.
      const deadline = timeoutMs === undefined ? Number.MAX_SAFE_INTEGER : Date.now() + timeoutMs
      const task: WorkerTask = {
        algorithm: algorithm.name,
        params,
        budgetMs,
        deadline,
        progress: channel?.port2,
      }
      const transferList = channel === undefined ? undefined : [channel.port2]
      outcome = await this.#pool
        .run(task, { signal: stop.signal, transferList })
        .catch(async (error: unknown) => {
          // Piscina has terminated the thread of an aborted run: its slot is free once the thread is gone.
          if (stop.signal.aborted) {
            await Promise.all(this.#exiting)
            throw stop.signal.reason
          }
          throw new AlgorithmError(algorithm.name, threadDeath(error), error)
        })
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      this.#releaseThread(slot)
      if (channel !== undefined) endProgress(channel.port1, progress as Progress)
    }
    if ('failure' in outcome) {
      // The thread's error, for the log: its message and its stack as the thread saw them.
      const cause = Object.assign(new Error(outcome.failure), { stack: outcome.stack })
      throw new AlgorithmError(algorithm.name, outcome.failure, cause)
    }
    return outcome
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

  async #acquireThread(lane: Lane, algorithm: string, signal?: AbortSignal): Promise<ThreadSlot> {
    signal?.throwIfAborted()
    if (this.#hasFreeThread()) return this.#take()
    return this.#lanes.wait(lane, algorithm, signal)
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
    while (this.#hasFreeThread() && this.#lanes.waiting > 0) this.#lanes.handOver(this.#take())
  }

  async close(): Promise<void> {
    this.#closed = true
    await Promise.all([this.#pool.close(), this.#processes?.close()])
  }

  /** The readiness checks of the process algorithms' processes, one per algorithm. */
  processChecks(): Record<string, () => boolean> {
    return this.#processes?.checks() ?? {}
  }
}

/** What a client is told of a thread that died under a run: no path, no stack. */
function threadDeath(error: unknown): string {
  if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY')
    return 'its worker thread ran out of memory (ALGOSERVE_THREAD_HEAP_MB)'
  return 'its worker thread stopped'
}

/**
 * Tells the hook what the port still holds, then closes it. The thread posted its last update before
 * its outcome, but on another port, whose message may arrive first: the updates are already queued on
 * this one and are read now, in order, so that the last one comes before the run's promise settles.
 */
function endProgress(port: MessagePort, progress: Progress): void {
  for (let queued = receiveMessageOnPort(port); queued !== undefined; queued = receiveMessageOnPort(port))
    tellProgress(progress, queued.message as ProgressUpdate)
  port.close()
}

/** Carries an error that came before any run, past the accounting of failed runs. */
class NotRun {
  constructor(readonly reason: unknown) {}
}

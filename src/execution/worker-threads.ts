// The worker threads of the algorithm runs: a piscina pool, so that one heavy call never stalls the
// event loop, and the waiting lines in front of it.
//
// /invoke calls and job runs share the pool through two waiting lines. When a thread frees up and
// both lines wait, they take turns: a queue of jobs never puts /invoke behind more than the runs
// already going, and a stream of /invoke calls never keeps jobs from their share of the threads.
// Within the job line the algorithms take turns, each version on its own (lanes.ts).
//
// Runs waiting when a thread frees go to it together, as a batch (thread-batch.ts) that the thread runs
// one after the other: one message each way per batch, not per run, and the thread never idles while
// the event loop is busy. A batch's runs keep their lanes' order; a run's hard limit counts from its own
// start on the thread; the runs behind a long one are taken back and go to the next thread free.
//
// A run's hard limit is watched from the moment its thread could take it (it received the batch, the run
// before it ended) until its answer is back, not only while it runs: a thread that leaves it waiting, or
// an answer that never comes, fails it at its limit too. A run is started at most once: after a thread
// dies or is stopped, only the runs it never took are run again, elsewhere.
//
// A run that has held its thread for LONG_RUN_MS is long. When every thread holds a long run, one
// more thread starts for what waits, so that a short run never waits for a long one to end: the
// operating system shares the CPUs between them. That thread stops once idle for SPARE_IDLE_MS.
import type { Worker } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { Algorithm } from '../algorithms/algorithm.js'
import { isBuiltIn, versionKey } from '../algorithms/registry.js'
import { AlgorithmError, ConfigError, RunTimeLimitError } from '../errors.js'
import type { TraceCarrier } from '../tracing/seams.js'
import { InputRejected } from './input-rejection.js'
import { type Lane, Lanes } from './lanes.js'
import type { PoolWorkerData, ThreadLoad } from './pool-worker.js'
import { tellProgress } from './progress.js'
import {
  DEFAULT_MAX_RESULT_BYTES,
  type Progress,
  type RunOptions,
  type RunWay,
  signalOf,
  tellStart,
} from './run-way.js'
import {
  type BatchOutcome,
  type BatchProgress,
  type BatchStarted,
  type BatchViews,
  batchBuffer,
  batchViews,
  ENDED,
  QUEUED,
  SKIPPED,
  STARTED,
  type WorkerBatch,
  type WorkerOutcome,
  type WorkerTask,
} from './thread-batch.js'
import type { TimedRun } from './timed-run.js'

// Under tsx (tests, `npm run dev`) the sources are .ts; the build runs .js.
const WORKER_FILE = new URL(
  `./pool-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
)

const LONG_RUN_MS = 1000
/** How long an answer posted by a thread may take to be read before its run counts as past its limit. */
const ANSWER_GRACE_MS = 1000
const SPARE_IDLE_MS = 30_000
/** The most runs in one batch: enough that a thread's round trip is shared by many, few enough to clone. */
const MAX_BATCH = 32

/** A thread taken by one batch; `long` once one of its runs has held it for LONG_RUN_MS. */
interface ThreadSlot {
  long: boolean
  timer: NodeJS.Timeout | undefined
}

/** A run waiting for a thread, or in a batch on one. */
interface ThreadRun {
  readonly algorithm: Algorithm
  readonly params: unknown
  readonly budgetMs: number
  readonly lane: Lane
  readonly signal: AbortSignal | undefined
  readonly timeoutMs: number | undefined
  readonly progress: Progress | undefined
  readonly trace: TraceCarrier | undefined
  readonly onStart: (() => void) | undefined
  readonly resolve: (outcome: WorkerOutcome) => void
  readonly reject: (error: unknown) => void
  /** Its batch and its place in it, while it is on a thread. */
  batch: Batch | undefined
  index: number
  onAbort: (() => void) | undefined
}

interface Batch {
  readonly id: number
  readonly runs: ThreadRun[]
  readonly views: BatchViews
  readonly slot: ThreadSlot
  /** Aborting it terminates the thread (piscina's way to stop a task). */
  readonly stop: AbortController
  /** The run the stop is for: past its limit, or aborted by its caller. */
  stopped: ThreadRun | undefined
  /** Runs not yet settled nor given back. */
  open: number
  limitTimer: NodeJS.Timeout | undefined
  /** Its thread has finished it, or died, or was stopped. */
  done: boolean
}

export interface WorkerThreadsOptions {
  /** The threads kept; one more starts while every one of them holds a long run. */
  threads: number
  /** Longest wait of an /invoke run for a thread, in ms; then ServiceUnavailableError. Default: none. */
  invokeQueueTimeoutMs?: number
  /** The module files of ALGOSERVE_ALGORITHMS, resolved: every worker thread loads them. */
  algorithmFiles?: string[]
  /** Every worker thread loads the built-in modules too (ALGOSERVE_PRIME_CHECKER); default true. */
  builtInAlgorithms?: boolean
  /** The heap limit of each worker thread, in MB; 0 leaves Node's default. */
  threadHeapMb?: number
  /** The memory limit of a run whose module declares no `memoryMb`, in MB; 0 or absent: none. */
  memoryMb?: number
}

export class WorkerThreads {
  readonly #pool: Piscina
  #closed = false
  // Runs wait here, first in first out within each lane, until a thread is free. Piscina's own queue
  // is not FIFO for abortable tasks: under load some waited seconds behind later ones
  // (bench/http/wrk/invoke.sh, 100-digit primes).
  readonly #lanes: Lanes<ThreadRun[]>
  /** The batches on a thread, or whose outcomes are still on their way, by id. */
  readonly #batches = new Map<number, Batch>()
  #lastBatchId = 0
  /** A #startWaiting is due at the end of this tick. */
  #sendScheduled = false
  #busy = 0
  /** Runs on a thread that have not yet been running for LONG_RUN_MS. */
  #shortRuns = 0
  readonly #threads: number
  readonly #memoryMb: number
  /** Threads terminated and not yet gone, with the promise of their exit. */
  readonly #exiting = new Set<Promise<void>>()
  /** Settles once every kept thread has loaded the modules, or one could not. */
  readonly #loaded: Promise<void>
  /** What each thread loads at its start: piscina gives this object to every thread it starts. */
  readonly #workerData: PoolWorkerData

  constructor(options: WorkerThreadsOptions) {
    const threads = options.threads
    this.#lanes = new Lanes(options.invokeQueueTimeoutMs ?? Number.POSITIVE_INFINITY, 'worker thread')
    this.#threads = threads
    this.#memoryMb = options.memoryMb ?? 0
    const workerData: PoolWorkerData = {
      algorithmFiles: options.algorithmFiles ?? [],
      builtIn: options.builtInAlgorithms ?? true,
    }
    this.#workerData = workerData
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
    // A thread also tells its load here (#watchLoading), and an algorithm may post anything.
    this.#pool.on('message', (message: BatchOutcome | BatchProgress | BatchStarted | ThreadLoad | null) => {
      if (typeof message !== 'object' || message === null) return
      if ('algoserveBatch' in message) this.#ended(message)
      else if ('algoserveProgress' in message) this.#progressed(message)
      else if ('algoserveStarted' in message) this.#started(message)
    })
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

  /**
   * After a reload: threads started from now on load these files. Those running keep what they loaded,
   * so that their runs of a removed version end; a version they lack they import at its first run.
   */
  algorithmsChanged(files: string[]): void {
    this.#workerData.algorithmFiles = files
  }

  /** The pool is open and has its worker threads. */
  get alive(): boolean {
    return !this.#closed && this.#pool.threads.length > 0
  }

  /** The way of a module's calls on these threads; the threads close with their owner, not with it. */
  way(algorithm: Algorithm): RunWay {
    return {
      run: (params, options) => {
        signalOf(options)
        return this.run(algorithm, params, options)
      },
      ready: () => this.alive,
      close: async () => {},
    }
  }

  /**
   * Runs one call on a thread. Rejects with the signal's reason when aborted, AlgorithmError when the
   * algorithm failed (threw, broke its result schema, or its thread died under it), RunTimeLimitError
   * when it ran past `timeoutMs`, and ServiceUnavailableError when an /invoke call waited for a thread
   * longer than its bound.
   */
  async run(
    algorithm: Algorithm,
    params: unknown,
    { budgetMs, lane = 'invoke', signal, timeoutMs, progress, trace, onStart }: RunOptions,
  ): Promise<TimedRun> {
    const outcome = await new Promise<WorkerOutcome>((resolve, reject) => {
      const run: ThreadRun = {
        algorithm,
        params,
        budgetMs,
        lane,
        signal,
        timeoutMs,
        progress,
        trace,
        onStart,
        resolve,
        reject,
        batch: undefined,
        index: -1,
        onAbort: undefined,
      }
      this.#queue(run, false)
    })
    if ('failure' in outcome) {
      if (outcome.invalidParams !== undefined)
        throw new InputRejected(outcome.failure, outcome.invalidParams.field)
      // The thread's error, for the log: its message and its stack as the thread saw them.
      const cause = Object.assign(new Error(outcome.failure), { stack: outcome.stack })
      throw new AlgorithmError(algorithm.name, outcome.failure, cause)
    }
    return outcome
  }

  /**
   * Queues the run in its lane (`first`: at its head, given back). With a thread free, what is queued
   * goes at the end of the tick, together in the lanes' turns (a claimed batch of jobs is asked for in
   * one tick): sent one by one, all but the first would wait for the first's round trip.
   */
  #queue(run: ThreadRun, first: boolean): void {
    const { name, version } = run.algorithm
    this.#lanes.enter(
      run.lane,
      versionKey(name, version),
      (batch) => batch.push(run),
      run.reject,
      run.signal,
      first,
    )
    if (!this.#sendScheduled && this.#hasFreeThread()) {
      this.#sendScheduled = true
      process.nextTick(() => {
        this.#sendScheduled = false
        this.#startWaiting()
      })
    }
  }

  /** Hands a batch to a free thread: what waits, in its lanes' turns, shared among the threads. */
  #startWaiting(): void {
    while (this.#hasFreeThread() && this.#lanes.waiting > 0) {
      const size = Math.min(MAX_BATCH, Math.ceil(this.#lanes.waiting / this.#threads))
      const runs: ThreadRun[] = []
      while (runs.length < size && this.#lanes.handOver(runs)) {}
      this.#dispatch(runs)
    }
  }

  #dispatch(runs: ThreadRun[]): void {
    const shared = batchBuffer(runs.length)
    const batch: Batch = {
      id: ++this.#lastBatchId,
      runs,
      views: batchViews(shared),
      slot: this.#take(),
      stop: new AbortController(),
      stopped: undefined,
      open: runs.length,
      limitTimer: undefined,
      done: false,
    }
    const tasks: WorkerTask[] = []
    runs.forEach((run, index) => {
      run.batch = batch
      run.index = index
      const task: WorkerTask = {
        algorithm: run.algorithm.name,
        version: run.algorithm.version,
        params: run.params,
        budgetMs: run.budgetMs,
        timeoutMs: run.timeoutMs,
        maxResultBytes: run.algorithm.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      }
      if (!isBuiltIn(run.algorithm)) task.source = run.algorithm.source
      if (run.progress !== undefined) task.followed = true
      if (run.trace !== undefined) task.trace = run.trace
      if (run.onStart !== undefined) task.announced = true
      const memoryMb = run.algorithm.memoryMb ?? this.#memoryMb
      if (memoryMb > 0) task.memoryMb = memoryMb
      if (run.signal !== undefined) {
        run.onAbort = () => this.#abort(run)
        run.signal.addEventListener('abort', run.onAbort, { once: true })
      }
      tasks.push(task)
    })
    this.#batches.set(batch.id, batch)
    batch.slot.timer = setTimeout(() => this.#watchLong(batch), LONG_RUN_MS)
    this.#watchLimits(batch)
    const message: WorkerBatch = { id: batch.id, runs: tasks, shared }
    this.#pool.run(message, { signal: batch.stop.signal }).then(
      () => this.#batchDone(batch, undefined),
      (error: unknown) => this.#batchDone(batch, error),
    )
  }

  /** A run's outcome, posted by its thread as the run ended. */
  #ended({ algoserveBatch, index, outcome }: BatchOutcome): void {
    const batch = this.#batches.get(algoserveBatch)
    const run = batch?.runs[index]
    if (run === undefined || run.batch !== batch) return
    this.#detach(run)
    run.resolve(outcome)
  }

  /** A followed run's progress, posted by its thread. */
  #progressed({ algoserveProgress, index, update }: BatchProgress): void {
    const batch = this.#batches.get(algoserveProgress)
    const run = batch?.runs[index]
    if (run?.progress === undefined || run.batch !== batch) return
    tellProgress(run.progress, update)
  }

  /** An announced run taken by its thread, posted before anything else of it. */
  #started({ algoserveStarted, index }: BatchStarted): void {
    const batch = this.#batches.get(algoserveStarted)
    const run = batch?.runs[index]
    if (run === undefined || run.batch !== batch) return
    tellStart(run)
  }

  /** The thread has finished the batch, or has died, or was stopped. */
  async #batchDone(batch: Batch, error: unknown): Promise<void> {
    clearTimeout(batch.limitTimer)
    if (error !== undefined) {
      // The slot is free, and the runs it held are known, once the thread is gone: its outcomes posted
      // before it went have been read by then.
      await Promise.all(this.#exiting)
      const { states } = batch.views
      const lost: ThreadRun[] = []
      for (const run of batch.runs) {
        if (run.batch !== batch) continue
        const taken = Atomics.load(states, run.index) !== QUEUED
        this.#detach(run)
        // The run the thread was stopped for (its limit, its caller) fails as such.
        if (run === batch.stopped) run.reject(batch.stop.signal.reason)
        // Taken by the thread, it never starts again: the thread died under it, or stopped before its
        // answer left; or the pool is closing, and nothing is left to run it.
        else if (taken || this.#closed)
          run.reject(new AlgorithmError(run.algorithm.name, threadDeath(error), error))
        // Never taken: it runs elsewhere.
        else lost.push(run)
      }
      for (const run of lost.reverse()) this.#queue(run, true)
    }
    batch.done = true
    if (batch.open === 0) this.#batches.delete(batch.id)
    this.#releaseThread(batch.slot)
  }

  /** The run leaves its batch: its outcome came, or it is given back or rejected. */
  #detach(run: ThreadRun): void {
    const batch = run.batch as Batch
    run.batch = undefined
    if (run.onAbort !== undefined) run.signal?.removeEventListener('abort', run.onAbort)
    run.onAbort = undefined
    if (--batch.open === 0 && batch.done) this.#batches.delete(batch.id)
  }

  /** The caller gave up a run on a thread: taken back if not begun, else its thread is stopped. */
  #abort(run: ThreadRun): void {
    const batch = run.batch
    if (batch === undefined) return
    if (Atomics.compareExchange(batch.views.states, run.index, QUEUED, SKIPPED) === QUEUED) {
      this.#detach(run)
      run.reject(run.signal?.reason)
      return
    }
    // An ended run's answer is on its way.
    if (Atomics.load(batch.views.states, run.index) === STARTED) this.#stop(batch, run, run.signal?.reason)
  }

  /**
   * Stops the batch's thread for the run, which fails with `reason`. A run the thread has not taken is
   * taken back first: the thread that left it waiting for its whole limit is stopped all the same.
   */
  #stop(batch: Batch, run: ThreadRun, reason: unknown): void {
    if (batch.stop.signal.aborted) return
    if (Atomics.compareExchange(batch.views.states, run.index, QUEUED, SKIPPED) === QUEUED) {
      this.#detach(run)
      run.reject(reason)
    } else batch.stopped = run
    batch.stop.abort(reason)
  }

  /**
   * Stops the thread when a run is past its limit, counted from its start, or, for the next run the
   * thread should take, from when the thread was free to take it; otherwise looks again when the first
   * limit could be reached (for a run further behind, were it to begin now).
   */
  #watchLimits(batch: Batch): void {
    const now = Date.now()
    const { received, starts, ends, states } = batch.views
    // When the thread was free to take the next run, while no run holds it; a batch waiting for its
    // thread to start (to load the modules) is not on a thread yet.
    let freeSince: number | undefined = received[0] || undefined
    let next = Number.POSITIVE_INFINITY
    for (const run of batch.runs) {
      const state = Atomics.load(states, run.index)
      let since: number | undefined
      if (state === SKIPPED) {
        if (freeSince !== undefined) freeSince = Math.max(freeSince, starts[run.index] as number)
        continue
      }
      if (state === QUEUED) {
        since = freeSince
        freeSince = undefined
      } else {
        since = starts[run.index] as number
        if (state === STARTED) freeSince = undefined
        else if (freeSince !== undefined) freeSince = Math.max(freeSince, ends[run.index] as number)
      }
      // A run settled, or given back, is no longer this batch's to watch.
      if (run.batch !== batch || run.timeoutMs === undefined) continue
      let end = (since ?? now) + run.timeoutMs
      // An ended run's answer left its thread: the event loop, busy, may not have read it yet.
      if (state === ENDED) end = Math.max(end, (ends[run.index] as number) + ANSWER_GRACE_MS)
      if (since !== undefined && end <= now) {
        this.#stop(batch, run, new RunTimeLimitError(run.algorithm.name, run.timeoutMs))
        return
      }
      next = Math.min(next, end)
    }
    if (Number.isFinite(next)) batch.limitTimer = setTimeout(() => this.#watchLimits(batch), next - now)
  }

  /**
   * Once a run has held the batch's thread for LONG_RUN_MS, the slot is long and the runs behind it
   * are taken back, for the next thread free (the spare one, when every thread holds a long run).
   */
  #watchLong(batch: Batch): void {
    const { slot, views } = batch
    const now = Date.now()
    const running = batch.runs.find(
      (run) => run.batch === batch && Atomics.load(views.states, run.index) === STARTED,
    )
    const since = running === undefined ? now : (views.starts[running.index] as number)
    if (now - since < LONG_RUN_MS) {
      slot.timer = setTimeout(() => this.#watchLong(batch), since + LONG_RUN_MS - now)
      return
    }
    slot.long = true
    this.#shortRuns--
    const behind = batch.runs.filter(
      (run) =>
        run.batch === batch && Atomics.compareExchange(views.states, run.index, QUEUED, SKIPPED) === QUEUED,
    )
    for (const run of behind) this.#detach(run)
    for (const run of behind.reverse()) this.#queue(run, true)
    this.#startWaiting()
  }

  #hasFreeThread(): boolean {
    return this.#busy < this.#threads || (this.#busy === this.#threads && this.#shortRuns === 0)
  }

  #take(): ThreadSlot {
    this.#busy++
    this.#shortRuns++
    return { long: false, timer: undefined }
  }

  #releaseThread(slot: ThreadSlot): void {
    clearTimeout(slot.timer)
    this.#busy--
    if (!slot.long) this.#shortRuns--
    this.#startWaiting()
  }

  async close(): Promise<void> {
    this.#closed = true
    await this.#pool.close()
  }
}

/** What a client is told of a thread that died under a run: no path, no stack. */
function threadDeath(error: unknown): string {
  if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY')
    return 'its worker thread ran out of memory (ALGOSERVE_THREAD_HEAP_MB)'
  return 'its worker thread stopped'
}

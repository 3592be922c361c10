// What the executor and a worker thread share about a batch: the runs handed to one thread at once,
// which it runs one after the other. Sending runs one at a time, a thread waited for the event loop
// to read each answer and send the next; a batch keeps it busy while the event loop serves HTTP.
//
// The batch's SharedArrayBuffer holds when its thread received it, and for each run a state word, a start
// time and an end time. The thread takes a run by moving its state from QUEUED to STARTED, so that the
// executor can take back a run that has not started (moving it to SKIPPED) with no race, see which run holds
// the thread, since when, and since when the thread has been free to take the next one.
import type { TraceCarrier } from '../tracing/seams.js'
import type { ProgressUpdate } from './progress.js'
import type { TimedRun } from './timed-run.js'

export const QUEUED = 0
export const STARTED = 1
export const ENDED = 2
export const SKIPPED = 3

/** One run of a batch, as the thread receives it. */
export interface WorkerTask {
  algorithm: string
  version: string
  /**
   * The module file of an algorithm not built in: a thread that did not load that version at its start
   * (a reload added it) imports it from there.
   */
  source?: string
  params: unknown
  budgetMs: number
  /** The run's hard limit in ms, counted from its start on the thread; none when absent. */
  timeoutMs?: number
  /** The caller follows the run's progress: the thread posts it (BatchProgress). */
  followed?: boolean
  /** The caller is told when the run begins: the thread posts it (BatchStarted) as it takes the run. */
  announced?: boolean
  /** The longest result the run may send back, in bytes of JSON. */
  maxResultBytes: number
  /** The algorithm's memoryMb: what the run may add to its thread's memory, in MB; unwatched when absent. */
  memoryMb?: number
  /** The run's trace context (RunContext's `trace`), when traced. */
  trace?: TraceCarrier
}

export interface WorkerBatch {
  id: number
  runs: WorkerTask[]
  /** When it was received, the runs' start and end times (Unix ms), then their states: see batchViews. */
  shared: SharedArrayBuffer
}

/**
 * The algorithm's failure comes back as a value, so that a lost outcome always means the thread
 * itself died. `failure` is the algorithm's own words; `stack` is for the log only; `invalidParams`
 * when the algorithm refused its params (an error named InvalidParamsError), with the member it named.
 */
export type WorkerOutcome = TimedRun | WorkerFailure

export interface WorkerFailure {
  failure: string
  stack: string | undefined
  invalidParams?: { field: string | undefined }
}

/** What a thread posts as each run of a batch ends, as it ends. */
export interface BatchOutcome {
  algoserveBatch: number
  index: number
  outcome: WorkerOutcome
}

/**
 * What a thread posts of a followed run's progress. On the same port as the outcomes, so that a run's
 * last update is read before its outcome.
 */
export interface BatchProgress {
  algoserveProgress: number
  index: number
  update: ProgressUpdate
}

/** What a thread posts as it takes an announced run, before anything else of it. */
export interface BatchStarted {
  algoserveStarted: number
  index: number
}

export interface BatchViews {
  /** When the thread received the batch: 0 until then. */
  received: Float64Array
  /** When the thread came to each run (written before it takes it, or finds it taken back). */
  starts: Float64Array
  /** When each run it ran ended. */
  ends: Float64Array
  states: Int32Array
}

export const batchBuffer = (runs: number): SharedArrayBuffer => new SharedArrayBuffer(8 + runs * 20)

export function batchViews(shared: SharedArrayBuffer): BatchViews {
  const runs = (shared.byteLength - 8) / 20
  return {
    received: new Float64Array(shared, 0, 1),
    starts: new Float64Array(shared, 8, runs),
    ends: new Float64Array(shared, 8 + runs * 8, runs),
    states: new Int32Array(shared, 8 + runs * 16, runs),
  }
}

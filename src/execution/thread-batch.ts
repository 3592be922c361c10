// What the executor and a worker thread share about a batch: the runs handed to one thread at once,
// which it runs one after the other. Sending runs one at a time, a thread waited for the event loop
// to read each answer and send the next; a batch keeps it busy while the event loop serves HTTP.
//
// Each run of a batch has a state word and a start time in one SharedArrayBuffer. The thread takes a
// run by moving its state from QUEUED to STARTED, so that the executor can take back a run that has
// not started (moving it to SKIPPED) with no race, see which run holds the thread, and since when.
import type { ProgressUpdate } from './progress.js'
import type { TimedRun } from './timed-run.js'

export const QUEUED = 0
export const STARTED = 1
export const ENDED = 2
export const SKIPPED = 3

/** One run of a batch, as the thread receives it. */
export interface WorkerTask {
  algorithm: string
  params: unknown
  budgetMs: number
  /** The run's hard limit in ms, counted from its start on the thread; none when absent. */
  timeoutMs?: number
  /** The caller follows the run's progress: the thread posts it (BatchProgress). */
  followed?: boolean
}

export interface WorkerBatch {
  id: number
  runs: WorkerTask[]
  /** The runs' start times (Unix ms, Float64) and then their states (Int32): see batchViews. */
  shared: SharedArrayBuffer
}

/**
 * The algorithm's failure comes back as a value, so that a lost outcome always means the thread
 * itself died. `failure` is the algorithm's own words; `stack` is for the log only.
 */
export type WorkerOutcome = TimedRun | { failure: string; stack: string | undefined }

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

export interface BatchViews {
  starts: Float64Array
  states: Int32Array
}

export const batchBuffer = (runs: number): SharedArrayBuffer => new SharedArrayBuffer(runs * 12)

export function batchViews(shared: SharedArrayBuffer): BatchViews {
  const runs = shared.byteLength / 12
  return { starts: new Float64Array(shared, 0, runs), states: new Int32Array(shared, runs * 8, runs) }
}

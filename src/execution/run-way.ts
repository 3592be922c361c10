// The ways a call runs, behind one interface: on the event loop when the algorithm finds it cheap
// (inline-way.ts), on a worker thread (worker-threads.ts), or on one of its algorithm's processes
// (process-pool.ts). The executor picks one per algorithm, once (Executor's wayOf), and counts every
// run the same way whichever ran it.
import type { TraceCarrier } from '../tracing/seams.js'
import type { Lane } from './lanes.js'
import type { TimedRun } from './timed-run.js'

/**
 * The longest result a run may send back, in bytes of JSON, when its algorithm declares no
 * maxResultBytes: a module's result as written, a program's line carrying a result or an error.
 */
export const DEFAULT_MAX_RESULT_BYTES = 16 * 1024 * 1024
/** The longest progress line of a program, in bytes, when its algorithm declares no maxProgressBytes. */
export const DEFAULT_MAX_PROGRESS_BYTES = 64 * 1024

/** A run's progress as its caller hears it: `fraction` from 0 to 1, and an optional line of text. */
export type Progress = (fraction: number, message?: string) => void

/** Whom a call runs for, on the log lines it causes: the request's id or the job's. */
export type LogContext = { request_id: string } | { job_id: string }

/** One call's options, the same for every way of running it. */
export interface RunOptions {
  /** How long work that can be cut short should go on, in ms (RunContext's budgetMs). */
  budgetMs: number
  /** Who asks: an /invoke call or a job; they wait in different lines for a thread or a process. */
  lane?: Lane
  /** Aborts the run, or its wait for a thread or a process. */
  signal?: AbortSignal
  /**
   * Makes `signal` when the run leaves the event loop for a thread or a process, and only then: a run on
   * the event loop ends within its turn, and needs none (an /invoke's cancel at its client's disconnect).
   */
  signalOnHop?: () => AbortSignal
  /** The hard limit of the run, in ms: then its thread is terminated or its process stopped. */
  timeoutMs?: number
  /**
   * Told of the run's progress when the algorithm reports it (a module's `context.progress`, a
   * program's progress lines): from a worker thread at most one update per PROGRESS_SEND_INTERVAL_MS
   * (progress.ts) and always the last, before the run settles. A hook that throws does not fail the
   * run. Without one, a run's progress costs nothing.
   */
  progress?: Progress
  /** Whom the run is for, on the log lines of a program's stderr. */
  logContext?: LogContext
  /** The trace the run is part of, handed to the algorithm (RunContext's `trace`, the request line). */
  trace?: TraceCarrier
  /**
   * Told once, when the run begins: it has its thread or its process (not while it waits for one), or it
   * runs on the event loop. A job is `running` from then on. A hook that throws does not fail the run.
   */
  onStart?: () => void
}

/** Tells `options.onStart` that the run began; its failure is the hook's own, not the run's. */
export function tellStart(options: Pick<RunOptions, 'onStart'>): void {
  try {
    options.onStart?.()
  } catch {}
}

/**
 * The run's signal as a way that leaves the event loop takes it: made by `signalOnHop` if need be, and set
 * on the caller's options, where the executor looks for an abort.
 */
export function signalOf(options: Omit<RunOptions, 'budgetMs'>): AbortSignal | undefined {
  options.signal ??= options.signalOnHop?.()
  return options.signal
}

/** A way of running the calls of one algorithm. */
export interface RunWay {
  /**
   * Runs one call: its result, measured and checked against the result schema. Synchronous when the
   * call ran on the event loop, so that a cheap /invoke is answered in the turn its body arrived.
   * Throws or rejects with the signal's reason, RunTimeLimitError, ServiceUnavailableError (no thread
   * or process within the /invoke bound), or the algorithm's own failure.
   */
  run(params: unknown, options: RunOptions): TimedRun | Promise<TimedRun>
  /** It can take a call now: GET /readyz's check. */
  ready(): boolean
  close(): Promise<void>
}

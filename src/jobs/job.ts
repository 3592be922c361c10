// A job as every backend keeps it and hands it on: the record a read gives, a new job, and how a run
// ended. Times are unix milliseconds; params, result and metadata are JSON text.

export type JobState = 'pending' | 'running' | 'completed' | 'failed'

export interface JobRecord {
  id: string
  algorithm: string
  /** The version of its algorithm it was pinned to at its creation: it runs on exactly that one. */
  version: string
  /** The algorithm's checked params as JSON; integers are exact decimal literals. */
  params: string
  webhook: string | null
  /** The algorithm said the run is cheap (inline, microseconds): it needs no worker thread. */
  cheap: boolean
  status: JobState
  createdAt: number
  startedAt: number | null
  completedAt: number | null
  result: string | null
  error: string | null
  metadata: string | null
  /** Runs started so far; the current run's number identifies it (a stale run cannot finish a job). */
  runs: number
  /** Runs that ended because the process or worker running them died. */
  lostRuns: number
  /** What the current run last said of its progress, while the job runs (progress.ts); else null. */
  progress: JobProgress | null
  /** The trace context it was created in, as JSON (tracing/seams.ts); absent when not traced. */
  trace?: string
}

/** A running job's latest progress, as the algorithm reported it. */
export interface JobProgress {
  /** From 0 to 1. */
  fraction: number
  message: string | null
  /** How many progress updates of this run were stored, this one included: 1, 2, ... */
  seq: number
}

export interface NewJob {
  id: string
  algorithm: string
  /** The version of its algorithm it was pinned to at its creation: it runs on exactly that one. */
  version: string
  params: string
  webhook: string | null
  cheap: boolean
  createdAt: number
  /** Set by tracing when the job is sent in a traced request (tracing/seams.ts). */
  trace?: string
}

/** How a run ended: a result, or the job's error. */
export type JobOutcome =
  | { status: 'completed'; result: string; metadata: string }
  | { status: 'failed'; error: string }

/** A completed or failed job has ended: it changes no more. */
export const isEnded = (status: JobState): boolean => status === 'completed' || status === 'failed'

/** After this many lost runs a job fails instead of running again (docs/jobs.md, lost runs). */
export const MAX_LOST_RUNS = 3

export const lostRunsError = (lost: number): string =>
  `The job was lost ${lost} times (the process or worker running it stopped) and will not run again.`

// The job store: where jobs and their webhook deliveries live. The runner, the webhook dispatcher and
// the routes speak only this interface; `sqlite-store.ts` implements it for one process, and a Redis
// backend can implement it for many. Every call is asynchronous so that a networked store fits.
import type { DeliveryAttempt } from '../deliveries.js'

export type JobState = 'pending' | 'running' | 'completed' | 'failed'

/** A job as stored. Times are unix milliseconds; params, result and metadata are JSON text. */
export interface JobRecord {
  id: string
  algorithm: string
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
}

export interface NewJob {
  id: string
  algorithm: string
  params: string
  webhook: string | null
  cheap: boolean
  createdAt: number
}

/** How many jobs one claim may take: in all, and of those not cheap (each holds a worker thread). */
export interface ClaimLimits {
  jobs: number
  heavy: number
}

/** A job's end, and the webhook delivery it schedules when the job has a webhook. */
export type JobOutcome =
  | { status: 'completed'; result: string; metadata: string }
  | { status: 'failed'; error: string }

export interface JobEnd {
  id: string
  run: number
  completedAt: number
  outcome: JobOutcome
}

/**
 * Builds the webhook delivery of a job that just ended, or null when it has no webhook. The store
 * calls it in the same step that ends the job, so a finished job never misses its callback.
 */
export type DeliveryFactory = (job: JobRecord) => NewDelivery | null

export interface NewDelivery {
  /** The Standard Webhooks `webhook-id`, the same on every attempt. */
  id: string
  jobId: string
  url: string
  payload: string
}

export interface Delivery extends NewDelivery {
  /** Attempts made so far, including the one just claimed. */
  attempts: number
}

/** What happened to one delivery attempt, and so what the store does with the delivery. */
export type DeliveryOutcome =
  | { kind: 'delivered'; record?: DeliveryAttempt }
  | { kind: 'retry'; nextAt: number; error: string; record?: DeliveryAttempt }
  | { kind: 'failed'; error: string; record?: DeliveryAttempt }
  /**
   * The attempt was cut short by a shutdown, or not made (its receiver had its share of attempts in
   * flight): the delivery waits again, due at `nextAt` (default now), the attempt not counted.
   */
  | { kind: 'released'; nextAt?: number }

// The contract of `JobStore` names these; they live with every other error class.
export { DuplicateJobIdError, StoreFullError, StoreUnavailableError } from '../../errors.js'

/** After this many lost runs a job fails instead of running again (decisions.md, Jobs). */
export const MAX_LOST_RUNS = 3

export const lostRunsError = (lost: number): string =>
  `The job was lost ${lost} times (the process or worker running it stopped) and will not run again.`

export interface JobStore {
  /**
   * Adds a pending job; throws StoreFullError when the most allowed jobs already wait, and
   * DuplicateJobIdError when the id is taken.
   */
  create(job: NewJob): Promise<void>
  /** A job by id, or null when there is none or it has expired. */
  read(id: string, now: number): Promise<JobRecord | null>
  /**
   * Moves pending jobs, oldest first, to running and returns them: up to `limits.jobs`, stopping at
   * the first job that is not cheap once `limits.heavy` such jobs are taken (jobs start in creation
   * order).
   */
  claim(limits: ClaimLimits, now: number): Promise<JobRecord[]>
  /** Ends a running job (completed or failed), scheduling its webhook in the same step; false if stale. */
  finish(end: JobEnd): Promise<boolean>
  /** Puts a running job back to pending, as at a shutdown; the run is not counted as lost. */
  release(id: string, run: number): Promise<void>
  /**
   * Counts a run as lost (the worker running it died) and puts the job back to pending, or fails it
   * saying so once MAX_LOST_RUNS runs are lost. Returns the job's state afterwards.
   */
  loseRun(id: string, run: number, now: number): Promise<JobState | null>
  /** Deletes finished jobs, and finished deliveries, older than the retention; returns jobs removed. */
  expire(now: number): Promise<number>
  countPending(): Promise<number>
  /** Moves up to `limit` deliveries due by `now` to sending and returns them. */
  claimDeliveries(limit: number, now: number): Promise<Delivery[]>
  /** When the next pending delivery is due, or null when none waits. */
  nextDeliveryAt(): Promise<number | null>
  settleDelivery(id: string, outcome: DeliveryOutcome, now: number): Promise<void>
  /** Answers whether the store can serve (readiness). */
  ping(): Promise<boolean>
  close(): Promise<void>
}

// What the embedded backend, its runner and its dispatcher ask of their store: every call they make,
// and nothing else. `sqlite-store.ts` implements it on one SQLite file. Every call is asynchronous, so
// that a store elsewhere fits the same loops.
import type { Attempted } from '../../webhooks/attempt.js'
import type { IdempotencyClaim, JobCounts, Submitted } from '../backend.js'
import type { StoredDelivery } from '../deliveries.js'
import type { JobOutcome, JobRecord, JobState, NewJob } from '../job.js'
import type { JobListPage, JobListQuery } from '../listing.js'
import type { JobSummary } from '../summary.js'

/**
 * How many jobs one claim may take: in all, of those not cheap (each holds a worker thread), and of
 * each version in `room` (by versionKey: those that declare a `concurrency`, what is left of it); and
 * of which versions (by versionKey) at all, when `served` says: the jobs of others wait.
 */
export interface ClaimLimits {
  jobs: number
  heavy: number
  room?: ReadonlyMap<string, number>
  served?: readonly string[]
}

/** The end of run `run` of job `id`. */
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
  /** Its job's trace context (JobRecord's `trace`). */
  trace?: string
}

export interface Delivery extends NewDelivery {
  /** Attempts made so far, including the one just claimed. */
  attempts: number
  /** When it fell due (unix ms): a delivery deferred keeps its place in line. */
  dueAt: number
}

/**
 * What the store does with a claimed delivery: what its attempt came to, or, for one not made (its
 * receiver had no slot free), due again at `nextAt`, the attempt not counted.
 */
export type DeliveryOutcome = Attempted | { kind: 'deferred'; nextAt: number }

export interface JobStore {
  /**
   * Adds a pending job; with an Idempotency-Key, in the same step, records the key, or answers with
   * the job the key made before (same fingerprint). Throws StoreFullError when the most allowed jobs
   * already wait, DuplicateJobIdError when the id is taken, and IdempotencyKeyReusedError.
   */
  submit(job: NewJob, idempotency?: IdempotencyClaim): Promise<Submitted>
  /** A job by id, or null when there is none or it has expired. */
  read(id: string, now: number): Promise<JobRecord | null>
  /** Fails a pending job as cancelled, scheduling its webhook; null when it is not pending. */
  cancelPending(id: string, now: number): Promise<JobRecord | null>
  list(query: JobListQuery, now: number): Promise<JobListPage>
  summary(now: number): Promise<JobSummary>
  counts(): Promise<JobCounts>
  /** The delivery of job `job`, or null when none is made (yet, or without a webhook). */
  delivery(job: JobRecord): Promise<StoredDelivery | null>
  /**
   * Moves pending jobs, oldest first, to running (claimed: begun only if cheap) and returns them: up to
   * `limits.jobs`, stopping at the first job that is not cheap once `limits.heavy` such jobs are taken (jobs
   * start in creation order), and passing over the jobs of a version once its `limits.room` is taken, and
   * those of the versions `limits.served` leaves out.
   */
  claim(limits: ClaimLimits, now: number): Promise<JobRecord[]>
  /**
   * Marks run `run` of a claimed job begun, when its thread or process takes it (a cheap job is begun
   * by its claim). Until then the job reads `pending`, with no started_at.
   */
  begin(id: string, run: number, now: number): Promise<void>
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
  /**
   * Moves up to `limit` deliveries due by `now` to sending and returns them, leaving those whose URL
   * starts with one of `skip`'s receivers (webhooks/receiver-pace.ts `receiverOf`) then a `/`.
   */
  claimDeliveries(limit: number, now: number, skip?: readonly string[]): Promise<Delivery[]>
  /** When the next pending delivery is due (leaving `skip`'s receivers), or null when none waits. */
  nextDeliveryAt(skip?: readonly string[]): Promise<number | null>
  settleDelivery(id: string, outcome: DeliveryOutcome, now: number): Promise<void>
  /** Answers whether the store can serve (readiness). */
  ping(): Promise<boolean>
  close(): Promise<void>
}

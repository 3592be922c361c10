// The job backend: the one seam between the service (routes, worker process) and where jobs and their
// webhook deliveries live. `embedded/` keeps them in SQLite and runs them in this process; `redis/`
// keeps them in Redis through BullMQ, shared by any number of processes. What both share is beside
// this file: running a job (execute.ts), the job's view, listing, the summary's shape, the cancel rule
// and the deliveries' view; what a webhook attempt means is webhooks/'s.
import type { FastifyBaseLogger } from 'fastify'
import type { Registry } from '../algorithms/registry.js'
import type { AttemptDelivery } from '../webhooks/attempt.js'
import type { AttemptStatus } from '../webhooks/policy.js'
import type { ReceiverPace } from '../webhooks/receiver-pace.js'
import type { DeliveryHistory } from './deliveries.js'
import type { JobOutcome, JobRecord, NewJob } from './job.js'
import type { LogJobEnd } from './job-end.js'
import type { JobListPage, JobListQuery } from './listing.js'
import type { ReportProgress } from './progress.js'
import type { JobSummary } from './summary.js'

/**
 * Runs one job, telling `progress` what the algorithm reports and `started` when the algorithm begins
 * (it has its thread or process: until then the job waits, and reads `pending`). Its failures are
 * outcomes (a worker thread that died under it too); it throws only ShutdownAbort (give the job back),
 * or VersionNotLoadedAbort, one of them, when its pinned version is not loaded here.
 */
export type RunJob = (
  job: JobRecord,
  signal: AbortSignal,
  progress: ReportProgress,
  started?: () => void,
) => Promise<JobOutcome>

export type JobEndStatus = 'completed' | 'failed'

/**
 * A backend's option: called once for each job end this process stores (never for a give-back or a
 * retry), with its run time; the job metrics. A cancel ends a job in the process that serves it, which
 * may run no jobs, so this belongs to the backend rather than to consumeJobs.
 */
export type CountEnded = (algorithm: string, status: JobEndStatus, seconds: number) => void

/** What a backend can do, for the service to decide by (never by which backend it is). */
export interface BackendCapabilities {
  /**
   * Its jobs are kept where other processes take them too: a process may leave running them to
   * others (`algoserve worker`, ALGOSERVE_RUN_JOBS=false). Without it, the process that keeps the
   * jobs runs them.
   */
  readonly shared: boolean
}

/**
 * What a consumer reads of the loaded algorithms (a Registry is one): each name's versions, its default,
 * and the reloads that change them.
 */
export interface LoadedVersions {
  /** The names loaded, sorted. */
  names(): string[]
  versions(name: string): readonly { readonly version: string; readonly concurrency: number | null }[]
  defaultOf(name: string): { readonly version: string } | undefined
  onChange(listener: () => void): void
}

export interface ConsumeJobsOptions {
  /** Jobs holding a worker thread at once (on Redis, of each algorithm version). */
  concurrency: number
  /**
   * The algorithms whose jobs this process takes. A backend whose jobs only this process runs takes
   * every job regardless (the service then serves every algorithm it loaded).
   */
  algorithms: readonly string[]
  /**
   * The versions of the algorithms, followed through reloads: a process takes the jobs of every loaded
   * version of the algorithms it serves (a job pinned to another waits), and of a version that declares
   * its own `concurrency`, at most that many at once.
   */
  loaded: LoadedVersions
  /** Called once for each job end that a run taken here stored (job-end.ts): its log line. */
  logEnd?: LogJobEnd
}

export interface ConsumeDeliveriesOptions {
  /** Attempts in flight (or waiting for their receiver's slot) at once. */
  maxInFlight: number
  /** Each receiver's slots in this process; by default, a pace of its own at the default cap. */
  pace?: ReceiverPace
  /** Called after each attempt that counts. */
  onAttempt(status: AttemptStatus): void
  /** The deliveries' log (component `webhooks`). */
  log: FastifyBaseLogger
}

export interface Consumer {
  /** Taking work (for a worker process's readiness). */
  readonly running: boolean
  /** Stops taking work; items in flight get `graceMs`, then they are aborted and given back. */
  stop(graceMs: number): Promise<void>
}

/**
 * Jobs waiting and running now, for the gauges: in all and by algorithm. A job taken by a process but
 * waiting there for a thread or a process of its algorithm is waiting (it reads `pending`) where the
 * backend can tell it apart cheaply (docs/metrics.md).
 */
export interface JobCounts {
  waiting: number
  running: number
  /** The algorithms the backend knows of (with jobs, or served), each with its counts, 0 included. */
  byAlgorithm: ReadonlyMap<string, AlgorithmJobCounts>
}

export interface AlgorithmJobCounts {
  waiting: number
  running: number
}

/** An Idempotency-Key with the fingerprint of the request it came with (routes/jobs.ts). */
export interface IdempotencyClaim {
  key: string
  fingerprint: string
}

/** The job created, or, for an Idempotency-Key seen before with the same request, the job it made. */
export interface Submitted {
  id: string
  createdAt: number
  replayed: boolean
}

/** How a cancel ended: the job is not there, had ended already, or ended by this cancel (cancel.ts). */
export type CancelResult =
  | { kind: 'not_found' }
  | { kind: 'finished'; job: JobRecord }
  | { kind: 'cancelled'; job: JobRecord }
  /** The run did not stop in time (its process is stuck or gone): it will not run again, nor end well. */
  | { kind: 'stopping'; job: JobRecord }

export interface JobBackend {
  readonly capabilities: BackendCapabilities
  /**
   * Stores a pending job and, with a webhook, the delivery that goes out once it ends. Throws
   * StoreFullError, StoreUnavailableError or DuplicateJobIdError; with an Idempotency-Key already used
   * for another request (another fingerprint), IdempotencyKeyReusedError.
   */
  submit(job: NewJob, idempotency?: IdempotencyClaim): Promise<Submitted>
  /** A job by id, or null when there is none or it has expired. */
  read(id: string, now: number): Promise<JobRecord | null>
  /**
   * Cancels a job: a pending one fails at once, a running one's run is aborted wherever it runs and
   * the job fails; resolves once the job has ended (`The job was cancelled.`, or another end that won),
   * or after CANCEL_WAIT_MS (cancel.ts).
   */
  cancel(id: string, now: number): Promise<CancelResult>
  /** A page of jobs, newest first; expired jobs never appear. Throws BadCursorError. */
  list(query: JobListQuery, now: number): Promise<JobListPage>
  /**
   * Jobs by state, and the ends of each of the last minutes with their latencies (summary.ts), from
   * counters kept as jobs change: never a scan of the jobs.
   */
  summary(now: number): Promise<JobSummary>
  /** The webhook delivery of a job and its attempts, or null when the job is not there. */
  deliveries(id: string, now: number): Promise<DeliveryHistory | null>
  /**
   * Calls `listener` with the id of a job that may have ended (in any process); the caller reads the
   * job to know. One subscription per process: waiters fan out from it (jobs/end-waits.ts).
   */
  onEnded(listener: (id: string) => void): Promise<void>
  /**
   * Calls `listener` with the id of a job that may have changed in any process: started, given back,
   * ended, or its progress stored. One subscription per process: streams of job events fan out from it
   * (jobs/event-feed.ts).
   */
  onChanged(listener: (id: string) => void): Promise<void>
  counts(): Promise<JobCounts>
  /** Answers whether the backend can serve (readiness). */
  ping(): Promise<boolean>
  /**
   * How many live processes take each algorithm's jobs (GET /algorithms), by algorithm; null when the
   * backend cannot tell. A backend that can tell versions apart counts them too, by versionKey: every
   * version a live process has (served.ts reads a version missing there as one no process has).
   */
  workers(): Promise<ReadonlyMap<string, number> | null>
  /**
   * How many live processes take the jobs of each algorithm version, by versionKey (`Name@1.2.0`); null
   * when the backend cannot tell.
   */
  versionWorkers(): Promise<ReadonlyMap<string, number> | null>
  consumeJobs(run: RunJob, options: ConsumeJobsOptions): Consumer
  /**
   * A reload changed the algorithms loaded: a backend whose consumers are per algorithm or version takes
   * the jobs of those added (those of a version removed wait for a process that has it).
   */
  algorithmsChanged?(algorithms: Registry): void
  consumeDeliveries(attempt: AttemptDelivery, options: ConsumeDeliveriesOptions): Consumer
  /** Deletes finished jobs past the retention; returns how many. */
  expire(now: number): Promise<number>
  close(): Promise<void>
}

/** What every backend is given by the service. */
export interface BackendOptions {
  /** How long a finished job stays readable after it ended, in ms. */
  ttlMs: number
  maxPending: number
  /** Waits before each webhook retry; their count is the number of retries. */
  retryWaitsMs: readonly number[]
  countEnded: CountEnded
  log: FastifyBaseLogger
}

// The few places where the service hands tracing its work: a new job, a job's run, a run lost with
// its process, a job's end, a webhook attempt, and the trace context a run passes to its algorithm.
// Each is called through `tracing`, which is a plain pass-through unless main.ts installed the SDK's
// (sdk.ts) at start: with tracing off no OpenTelemetry module is loaded and each seam costs one call.
import type { JobOutcome, JobRecord, NewJob } from '../jobs/job.js'

/** A W3C Trace Context as a run is given it (RunContext's `trace`, a program's request line). */
export interface TraceCarrier {
  traceparent: string
  tracestate?: string
}

export interface Tracing {
  /**
   * Sends job `job` (`submit`) in a span of its own, and stores that span's context on the job
   * (`job.trace`), so that its runs and webhook attempts, on any process, join the request's trace.
   */
  submit<T>(job: NewJob, submit: () => Promise<T>): Promise<T>
  /** Runs job `job` (`run`) in a span of the trace it was created in, with its wait before it. */
  run(job: JobRecord, version: string | null, run: () => Promise<JobOutcome>): Promise<JobOutcome>
  /**
   * Records run `lost.attempt` of a job, lost with the process or worker that ran it (which could not
   * record it), from its start to when another process found it lost.
   */
  lost(lost: LostRun): void
  /**
   * Calls `end` (a job's end counted and logged) in the span of the job's run `job.attempt` when this
   * process ran it, else in the job's trace (`job.trace`): the line and the latency's exemplar join it.
   */
  ended<T>(job: { id: string; attempt: number; trace?: string }, end: () => T): T
  /** Makes attempt `attempt` of the webhook of job `jobId` in a span of the job's trace. */
  attempt<T extends { kind: string }>(
    trace: string | undefined,
    webhook: { jobId: string; webhookId: string; attempt: number },
    send: () => Promise<T>,
  ): Promise<T>
  /** The trace context that a run started now should carry to its algorithm; undefined when none. */
  carrier(): TraceCarrier | undefined
}

/** A job's run that died with its process or worker, as the process that took the job over knows it. */
export interface LostRun {
  id: string
  algorithm: string
  /** The job's trace context (JobRecord's `trace`); nothing is recorded without one. */
  trace?: string
  /** The run's number (JobRecord's `runs` when it ran). */
  attempt: number
  /** When it began, as stored (unix ms); null when it was lost before it began. */
  startedAt: number | null
  /** The process that ran it (job-end.ts WORKER), when stored. */
  worker?: string
  /** When its loss was found (unix ms). */
  lostAt: number
}

const off: Tracing = {
  submit: (_job, submit) => submit(),
  run: (_job, _version, run) => run(),
  lost: () => {},
  ended: (_job, end) => end(),
  attempt: (_trace, _webhook, send) => send(),
  carrier: () => undefined,
}

/** The seams in force: pass-throughs until `installTracing`. */
export let tracing: Tracing = off

export function installTracing(installed: Tracing): void {
  tracing = installed
}

// The few places where the service hands tracing its work: a new job, a job's run, a webhook attempt,
// the trace context a run passes to its algorithm, and the ids a log line carries. Each is called
// through `tracing`, which is a plain pass-through unless main.ts installed the SDK's (sdk.ts) at start:
// with tracing off no OpenTelemetry module is loaded and each seam costs one call.
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
  /** Makes attempt `attempt` of the webhook of job `jobId` in a span of the job's trace. */
  attempt<T extends { kind: string }>(
    trace: string | undefined,
    webhook: { jobId: string; webhookId: string; attempt: number },
    send: () => Promise<T>,
  ): Promise<T>
  /** The trace context that a run started now should carry to its algorithm; undefined when none. */
  carrier(): TraceCarrier | undefined
  /**
   * The ids a line logged outside any span (a job's end, on Redis) carries for the job traced in
   * `stored`: its trace and its `send` span; {} inside a span, whose ids the line carries already.
   */
  logFields(stored: string | undefined): { trace_id?: string; span_id?: string }
}

const off: Tracing = {
  submit: (_job, submit) => submit(),
  run: (_job, _version, run) => run(),
  attempt: (_trace, _webhook, send) => send(),
  carrier: () => undefined,
  logFields: () => ({}),
}

/** The seams in force: pass-throughs until `installTracing`. */
export let tracing: Tracing = off

export function installTracing(installed: Tracing): void {
  tracing = installed
}

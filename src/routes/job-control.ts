// Job control beyond the interface (docs/jobs.md), tag `job-control`: cancel a job, list jobs, a
// summary of all jobs (the dashboard's overview), and the history of a job's webhook delivery. Every
// backend does the work (jobs/backend.ts); errors are the /jobs routes' wrapped shape (the store's
// troubles become 503 in the error handler), and a job is shown exactly as GET /jobs/{job_id} shows it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import {
  BadCursorError,
  JobAlreadyFinishedError,
  JobNotFoundError,
  SchemaValidationError,
  ServiceUnavailableError,
  shortenValue,
} from '../errors.js'
import type { ExampleContext } from '../http/examples.js'
import {
  cancelledJob,
  JOB_ID,
  JOB_ID_PROBLEM,
  JOB_NOT_FOUND,
  problem,
  STORE_UNAVAILABLE,
  wrapped,
} from '../http/examples.js'
import { sendJsonText } from '../http/json-reply.js'
import {
  DeliveryHistoryResponse,
  described,
  JobIdParams,
  JobListResponse,
  JobStatusResponse,
  JobSummaryResponse,
  validationFailed,
  wrappedError,
} from '../http/schemas.js'
import type { JobBackend } from '../jobs/backend.js'
import type { DeliveryHistory } from '../jobs/deliveries.js'
import type { JobState } from '../jobs/job.js'
import { jobListItemJson, jobStatusJson } from '../jobs/job-view.js'
import { isoTime, jsonText, jsonTime } from '../jobs/json-text.js'
import { decodeCursor, encodeCursor, type ListPosition } from '../jobs/listing.js'
import { type JobSummary, LATENCY_BOUNDS_MS, SUMMARY_MINUTES } from '../jobs/summary.js'
import type { Metrics } from '../metrics/metrics.js'
import { RETRY_WAITS_MS } from '../webhooks/policy.js'
import { ATTEMPT_TIMEOUT_MS } from '../webhooks/sender.js'

export interface JobControlRouteOptions {
  backend: JobBackend
  metrics: Metrics
}

const TAG = 'job-control'
const DEFAULT_LIMIT = 50

const storeDown = wrappedError('SERVICE_UNAVAILABLE: the job store is unavailable.')

const ListQuery = Type.Object({
  status: Type.Optional(
    Type.Unsafe<JobState>({
      type: 'string',
      enum: ['pending', 'running', 'completed', 'failed'],
      description: 'Only jobs in this state.',
    }),
  ),
  algorithm: Type.Optional(Type.String({ description: 'Only jobs of this algorithm (case-sensitive).' })),
  // Typed as the query's text, which is what arrives: validation checks it reads as an integer, and does
  // not convert it.
  limit: Type.Optional(
    Type.Unsafe<string>({
      type: 'integer',
      minimum: 1,
      maximum: 500,
      default: DEFAULT_LIMIT,
      description: 'Jobs per page.',
    }),
  ),
  cursor: Type.Optional(
    Type.String({ description: 'The next_cursor of the page before; absent for the first page.' }),
  ),
})

function historyJson(history: DeliveryHistory): string {
  const attempts = history.attempts.map(
    (a) =>
      `{"attempt":${a.attempt},"at":${jsonTime(a.at)},"duration_ms":${a.durationMs},` +
      `"status_code":${a.statusCode ?? 'null'},"error":${jsonText(a.error)},` +
      `"next_attempt_at":${jsonTime(a.nextAttemptAt)}}`,
  )
  return (
    `{"job_id":${jsonText(history.jobId)},"url":${jsonText(history.url)},"state":${jsonText(history.state)},` +
    `"attempts":[${attempts.join(',')}]}`
  )
}

function summaryJson(summary: JobSummary): string {
  const { pending, running, completed, failed } = summary.counts
  const minutes = summary.ended.map(
    (m) =>
      `{"minute":${jsonTime(m.minute)},"completed":${m.completed},"failed":${m.failed},` +
      `"latency_ms":{"buckets":[${m.latency.join(',')}],"sum":${m.latencySumMs}}}`,
  )
  return (
    `{"counts":{"pending":${pending},"running":${running},"completed":${completed},"failed":${failed}},` +
    `"latency_bounds_ms":[${LATENCY_BOUNDS_MS.join(',')}],"ended_per_minute":[${minutes.join(',')}]}`
  )
}

export const jobControlRoutes: FastifyPluginAsyncTypebox<JobControlRouteOptions> = async (app, options) => {
  const { backend, metrics } = options

  app.post(
    '/jobs/:job_id/cancel',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: 'Cancel a job',
        operationId: 'cancelJob',
        tags: [TAG],
        description:
          'A pending job fails at once with error "The job was cancelled."; a running one has its run stopped, ' +
          'in whichever process runs it, and fails the same way within a second. The answer comes once the job ' +
          'has failed. Its webhook goes out as for any failed job. No body is needed (an empty one or {} is ' +
          'accepted). A job that ended meanwhile (its run finished first) is a 409.',
        params: JobIdParams,
        'x-examples': cancelJobExamples,
        response: {
          200: described(JobStatusResponse, 'The job, failed by the cancel.'),
          404: wrappedError('JOB_NOT_FOUND: the job does not exist or has expired.'),
          409: wrappedError('JOB_ALREADY_FINISHED: the job had ended; details.status says how.'),
          422: validationFailed,
          503: wrappedError(
            'SERVICE_UNAVAILABLE: the job store is unavailable, or the run did not stop within 5 s (its ' +
              'process is stuck or gone); read the job later.',
          ),
        },
      },
    },
    async (request, reply) => {
      const { job_id: id } = request.params
      const result = await backend.cancel(id, Date.now())
      if (result.kind === 'not_found') throw new JobNotFoundError(id)
      if (result.kind === 'finished') throw new JobAlreadyFinishedError(id, result.job.status)
      if (result.kind === 'stopping') {
        throw new ServiceUnavailableError(
          'The cancel is recorded but the run has not stopped yet; read the job later to see how it ended.',
        )
      }
      metrics.jobsCancelled.inc({ algorithm: result.job.algorithm })
      return sendJsonText(reply, jobStatusJson(result.job))
    },
  )

  app.get(
    '/jobs',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: 'List jobs',
        operationId: 'listJobs',
        tags: [TAG],
        description:
          'Jobs newest first (created_at, then job_id, descending), each as GET /jobs/{job_id} shows it. ' +
          'A cursor stays valid while jobs are created (they come before it); expired jobs never appear. ' +
          'A page may hold fewer than `limit` jobs with a filter; next_cursor null means there are no more.',
        querystring: ListQuery,
        'x-examples': listJobsExamples,
        response: {
          200: described(JobListResponse, 'A page of jobs.'),
          422: validationFailed,
          503: storeDown,
        },
      },
    },
    async (request, reply) => {
      const { query } = request
      let cursor: ListPosition | null = null
      if (query.cursor !== undefined) {
        try {
          cursor = decodeCursor(query.cursor)
        } catch (error) {
          if (!(error instanceof BadCursorError)) throw error
          throw new SchemaValidationError([
            {
              type: 'value_error',
              loc: ['query', 'cursor'],
              msg: 'Value error, not a cursor this service gave',
              input: shortenValue(query.cursor),
              ctx: { error: 'not a cursor this service gave' },
            },
          ])
        }
      }
      const page = await backend.list(
        {
          status: query.status ?? null,
          algorithm: query.algorithm ?? null,
          limit: query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit),
          cursor,
        },
        Date.now(),
      )
      const next = page.next === null ? 'null' : jsonText(encodeCursor(page.next))
      return sendJsonText(
        reply,
        `{"jobs":[${page.jobs.map(jobListItemJson).join(',')}],"next_cursor":${next}}`,
      )
    },
  )

  app.get(
    '/job-summary',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: 'Summary of all jobs',
        operationId: 'getJobSummary',
        tags: [TAG],
        description:
          'How many jobs each state holds now, over every job kept (expired jobs excepted), and how many ' +
          `completed and failed in each of the last ${SUMMARY_MINUTES} minutes, with their latency ` +
          '(creation to end) in buckets. Read from counters the job store keeps as jobs change: it costs ' +
          'the same however many jobs there are. The dashboard draws its overview from it.',
        'x-examples': jobSummaryExamples,
        response: {
          200: described(JobSummaryResponse, 'The counts.'),
          503: storeDown,
        },
      },
    },
    async (_request, reply) => {
      const summary = await backend.summary(Date.now())
      return sendJsonText(reply, summaryJson(summary))
    },
  )

  app.get(
    '/jobs/:job_id/deliveries',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: "A job's webhook deliveries",
        operationId: 'getJobDeliveries',
        tags: [TAG],
        description:
          "Every attempt to deliver the job's webhook (when, how long, the receiver's status or the error, " +
          'when the next is due) and the delivery state; kept as long as the job.',
        params: JobIdParams,
        'x-examples': deliveriesExamples,
        response: {
          200: described(DeliveryHistoryResponse, 'The delivery and its attempts.'),
          404: wrappedError('JOB_NOT_FOUND: the job does not exist or has expired.'),
          422: validationFailed,
          503: storeDown,
        },
      },
    },
    async (request, reply) => {
      const { job_id: id } = request.params
      const history = await backend.deliveries(id, Date.now())
      if (history === null) throw new JobNotFoundError(id)
      return sendJsonText(reply, historyJson(history))
    },
  )
}

// The examples of the operations above, in the document.

const cancelJobExamples = ({ shown }: ExampleContext) => ({
  parameters: { job_id: JOB_ID },
  responses: {
    200: cancelledJob(shown),
    404: JOB_NOT_FOUND,
    409: wrapped(
      'JOB_ALREADY_FINISHED',
      `Job '${JOB_ID}' has already ended (completed); it cannot be cancelled.`,
      { status: 'completed' },
    ),
    422: JOB_ID_PROBLEM,
    503: STORE_UNAVAILABLE,
  },
})

const listJobsExamples = ({ shown }: ExampleContext) => ({
  parameters: { status: 'failed', limit: 50 },
  responses: {
    200: {
      jobs: [
        {
          ...cancelledJob(shown),
          job_id: '5e2a7c01d9b4',
          status: 'running',
          completed_at: null,
          error: null,
          progress: { progress: 0.42, message: 'sieve: 812 of 1,930 relations' },
        },
        { ...cancelledJob(shown), progress: null },
      ],
      next_cursor: 'MTc5NTI3Mjk0MzEzOC5hMWIyYzNkNGU1ZjY',
    },
    422: problem(
      'enum',
      ['query', 'status'],
      "Input should be 'pending', 'running', 'completed' or 'failed'",
      'done',
    ),
    503: STORE_UNAVAILABLE,
  },
})

/** The latency buckets of a summary's minute: these counts in these buckets, the others empty. */
const latencyBuckets = (counts: Record<number, number>) =>
  LATENCY_BOUNDS_MS.map((_, i) => counts[i] ?? 0).concat(0)

const jobSummaryExamples = () => ({
  responses: {
    200: {
      counts: { pending: 12, running: 2, completed: 18204, failed: 31 },
      latency_bounds_ms: [...LATENCY_BOUNDS_MS],
      ended_per_minute: [
        {
          minute: '2026-11-21T16:01:00.000+00:00',
          completed: 1204,
          failed: 2,
          latency_ms: { buckets: latencyBuckets({ 2: 3, 3: 410, 4: 622, 5: 160, 6: 11 }), sum: 19870 },
        },
        {
          minute: '2026-11-21T16:15:00.000+00:00',
          completed: 410,
          failed: 1,
          latency_ms: { buckets: latencyBuckets({ 2: 1, 3: 150, 4: 201, 5: 55, 6: 4 }), sum: 6702 },
        },
      ],
    },
    503: STORE_UNAVAILABLE,
  },
})

/** A webhook's first attempt timed out, and the retry after the first wait was answered. */
const FIRST_ATTEMPT_AT = Date.parse('2026-11-21T16:15:09.150Z')
const TIMED_OUT_MS = ATTEMPT_TIMEOUT_MS + 11.2
const RETRY_AT = FIRST_ATTEMPT_AT + Math.round(TIMED_OUT_MS) + (RETRY_WAITS_MS[0] ?? 0)

const deliveriesExamples = () => ({
  parameters: { job_id: JOB_ID },
  responses: {
    200: {
      job_id: JOB_ID,
      url: 'https://example.com/hooks/algoserve',
      state: 'delivered',
      attempts: [
        {
          attempt: 1,
          at: isoTime(FIRST_ATTEMPT_AT),
          duration_ms: TIMED_OUT_MS,
          status_code: null,
          error: `no answer within ${ATTEMPT_TIMEOUT_MS} ms`,
          next_attempt_at: isoTime(RETRY_AT),
        },
        {
          attempt: 2,
          at: isoTime(RETRY_AT + 9),
          duration_ms: 41.7,
          status_code: 204,
          error: null,
          next_attempt_at: null,
        },
      ],
    },
    404: JOB_NOT_FOUND,
    422: JOB_ID_PROBLEM,
    503: STORE_UNAVAILABLE,
  },
})

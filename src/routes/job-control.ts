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
import { jsonText, jsonTime } from '../jobs/json-text.js'
import { decodeCursor, encodeCursor, type ListPosition } from '../jobs/listing.js'
import { type JobSummary, LATENCY_BOUNDS_MS, SUMMARY_MINUTES } from '../jobs/summary.js'
import type { Metrics } from '../metrics/metrics.js'

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

// The contract's bodies as TypeBox schemas. Each one drives request validation (validation.ts),
// response serialisation (fast-json-stringify) and the OpenAPI document, where its $id is the
// component name the contract gives it (docs/api.md). Nothing here is one algorithm's: an algorithm's
// own params and result come from the registry (algorithm-schemas.ts, and sharedSchemas below).
import { type TSchema, Type } from '@sinclair/typebox'
import type { Algorithm } from '../algorithms/algorithm.js'
import { invokeAlgorithm, type Registry } from '../algorithms/registry.js'

/**
 * An integer of any size as a client may send it. The validator reads it with `readIntegerInput`
 * (the `x-integer-input` mark), so big literals are never rounded through a double.
 */
const IntegerInput = Type.Union([Type.Integer(), Type.String({ pattern: '^-?[0-9]+$' })], {
  'x-integer-input': true,
  description:
    'An integer of any sign and size: a JSON integer literal (read exactly, never through a double), ' +
    'a float with no fractional part such as 7.0 or 1e3, or a string of decimal digits. ' +
    'At most ALGOSERVE_MAX_DIGITS (default 4300) digits, otherwise 400 VALIDATION_ERROR.',
  examples: [97, '18446744073709551617'],
})

const Timestamp = Type.String({
  format: 'date-time',
  description: 'ISO 8601 in UTC with an explicit +00:00 offset and millisecond precision.',
  examples: ['2026-11-21T02:14:56.124+00:00'],
})

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const InvokeRequest = Type.Object(
  { number: IntegerInput },
  { $id: 'InvokeRequest', description: 'Body of POST /invoke.' },
)

// Its members' examples are the algorithm the document shows (algorithm-examples.ts).
export const Metadata = Type.Object(
  {
    algorithm: Type.String(),
    version: Type.String(),
    elapsed_time: Type.Number({ description: "The algorithm's own run time, in seconds." }),
  },
  {
    $id: 'Metadata',
    additionalProperties: true,
    description: 'Execution metadata; further keys may appear.',
  },
)

/** POST /invoke's answer: `algorithm`'s result, under its result schema's own $id (the interface's name). */
export const invokeResponse = (algorithm: Algorithm) =>
  Type.Object(
    {
      request_id: Type.String(),
      status: Type.Literal('success'),
      result: Type.Ref(String(algorithm.module.result.$id)),
      metadata: Type.Ref(Metadata),
    },
    { $id: 'InvokeResponse' },
  )

export const JobStatus = Type.Unsafe<'pending' | 'running' | 'completed' | 'failed'>({
  $id: 'JobStatus',
  type: 'string',
  enum: ['pending', 'running', 'completed', 'failed'],
})

export const JobRequest = Type.Object(
  {
    algorithm: Type.String({ description: 'Algorithm name, case-sensitive.' }),
    version: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'The version to run: an exact version (`1.2.0`) or a semver range (`1.x`, `^1.2`), which picks the ' +
          'highest loaded match; without it, the default version. The job is pinned to it at its creation ' +
          '(header Algorithm-Version); a version no loaded one matches is 404 ALGORITHM_NOT_FOUND.',
        examples: ['1.0.0', '^1'],
      }),
    ),
    params: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'Algorithm parameters, checked against the params schema of its version.',
      },
    ),
    webhook: Type.Optional(
      Nullable(
        Type.String({
          description:
            'Absolute http(s) URL of at most 2048 characters, called when the job ends. Private, loopback ' +
            'and other non-public targets are refused unless ALGOSERVE_WEBHOOK_ALLOW_PRIVATE=true.',
        }),
      ),
    ),
  },
  { $id: 'JobRequest' },
)

/** A job's result: the document shows each algorithm's own (algorithm-schemas.ts). */
const AnyResult = Type.Unknown({ description: "The algorithm's result; null unless the job completed." })

export const JobCreateResponse = Type.Object(
  {
    job_id: Type.String({ pattern: '^[0-9a-f]{12}$' }),
    status: Type.Ref(JobStatus),
    message: Type.String(),
    created_at: Timestamp,
  },
  { $id: 'JobCreateResponse' },
)

export const JobStatusResponse = Type.Object(
  {
    job_id: Type.String({ pattern: '^[0-9a-f]{12}$' }),
    status: Type.Ref(JobStatus),
    algorithm: Type.String(),
    created_at: Timestamp,
    started_at: Nullable(Timestamp),
    completed_at: Nullable(Timestamp),
    result: AnyResult,
    error: Nullable(Type.String()),
    metadata: Nullable(Type.Ref(Metadata)),
  },
  { $id: 'JobStatusResponse' },
)

export const JobProgress = Type.Object(
  {
    progress: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'The fraction done, as the algorithm reports it.',
    }),
    message: Nullable(Type.String({ description: "The algorithm's words on where it is." })),
  },
  {
    $id: 'JobProgress',
    description:
      "A running job's latest progress. Stored at most a few times a second, whatever the algorithm sends.",
  },
)

export const JobListItem = Type.Composite(
  [
    JobStatusResponse,
    Type.Object({
      progress: Type.Union([Type.Ref(JobProgress), Type.Null()], {
        description: 'The latest progress of a running job that has reported some; otherwise null.',
      }),
    }),
  ],
  { $id: 'JobListItem', description: 'A job as GET /jobs/{job_id} shows it, with its progress.' },
)

export const JobListResponse = Type.Object(
  {
    jobs: Type.Array(Type.Ref(JobListItem), { description: 'Newest first (created_at, then job_id).' }),
    next_cursor: Nullable(
      Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
    ),
  },
  { $id: 'JobListResponse', description: 'A page of jobs (GET /jobs).' },
)

/** The webhook callback's body, exactly the interface's payload; only documented. */
export const WebhookPayload = Type.Object(
  {
    job_id: Type.String({ pattern: '^[0-9a-f]{12}$' }),
    status: Type.Unsafe<'completed' | 'failed'>({ type: 'string', enum: ['completed', 'failed'] }),
    algorithm: Type.String(),
    result: AnyResult,
    error: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Union([Type.Ref(Metadata), Type.Null()]),
    completed_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookPayload', description: 'The body of the webhook callback.' },
)

export const DeliveryAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: 'The attempt number, from 1.' }),
    at: Timestamp,
    duration_ms: Type.Number({ description: 'How long the attempt took, in ms.' }),
    status_code: Nullable(Type.Integer({ description: "The receiver's HTTP status, if it answered." })),
    error: Nullable(Type.String({ description: 'Why the attempt failed; null when it succeeded.' })),
    next_attempt_at: Nullable(Timestamp),
  },
  { $id: 'DeliveryAttempt', description: 'One attempt to deliver a webhook.' },
)

export const DeliveryHistoryResponse = Type.Object(
  {
    job_id: Type.String({ pattern: '^[0-9a-f]{12}$' }),
    url: Nullable(Type.String({ description: 'The webhook URL; null when the job has none.' })),
    state: Type.Unsafe<'none' | 'waiting' | 'retrying' | 'delivered' | 'failed'>({
      type: 'string',
      enum: ['none', 'waiting', 'retrying', 'delivered', 'failed'],
      description:
        'none: no webhook; waiting: the job has not ended or the first attempt has not finished; ' +
        'retrying: an attempt failed and another is due (next_attempt_at of the last attempt); ' +
        'delivered; failed: given up.',
    }),
    attempts: Type.Array(Type.Ref(DeliveryAttempt)),
  },
  { $id: 'DeliveryHistoryResponse', description: "A job's webhook delivery and its attempts." },
)

const Count = (description: string) => Type.Integer({ minimum: 0, description })

export const JobSummaryResponse = Type.Object(
  {
    counts: Type.Object(
      {
        pending: Count('Jobs waiting to run.'),
        running: Count('Jobs running now.'),
        completed: Count('Completed jobs still kept (not past ALGOSERVE_JOB_TTL_SECONDS).'),
        failed: Count('Failed jobs still kept, cancelled ones included.'),
      },
      { description: 'Jobs in each state now, over every job the service keeps.' },
    ),
    latency_bounds_ms: Type.Array(Type.Integer({ minimum: 1 }), {
      description:
        "The latency buckets' upper bounds, ms, ascending: bucket i holds the jobs whose latency is " +
        'at most bound i and above bound i - 1; one more bucket, the last, holds those above every bound.',
    }),
    ended_per_minute: Type.Array(
      Type.Object({
        minute: { ...Timestamp, description: 'The start of a whole UTC minute.' },
        completed: Count('Jobs that completed in that minute.'),
        failed: Count('Jobs that failed in that minute, cancelled ones included.'),
        latency_ms: Type.Object(
          {
            buckets: Type.Array(Count('Jobs in this bucket.'), {
              description: 'One count a bucket of latency_bounds_ms, then the one above them all.',
            }),
            sum: Count('Their latencies added up, ms: with the count, their mean.'),
          },
          { description: 'The latency (creation to end) of the jobs that ended in that minute.' },
        ),
      }),
      {
        description:
          'The last 15 minutes, oldest first; the last is the current (partial) minute. Ends are ' +
          'counted when they happen: a job that has expired since still counts in its minute.',
      },
    ),
  },
  {
    $id: 'JobSummaryResponse',
    description: 'Counts by state, and job ends per minute with their latency (GET /job-summary).',
  },
)

export const JobIdParams = Type.Object({
  job_id: Type.String({ pattern: '^[0-9a-f]{12}$', description: '12 lowercase hexadecimal characters.' }),
})

export const ErrorResponse = Type.Object(
  {
    error: Type.String({ description: 'Stable error code.' }),
    message: Type.String(),
    details: Nullable(Type.Object({}, { additionalProperties: true })),
    request_id: Nullable(Type.String()),
  },
  { $id: 'ErrorResponse' },
)

export const WrappedErrorResponse = Type.Object(
  { detail: Type.Ref(ErrorResponse) },
  { $id: 'WrappedErrorResponse', description: 'The error body of /jobs and /jobs/{job_id}.' },
)

/**
 * One 422 problem; its `$id` is the contract's name, the TypeScript name differs from the 400 error class.
 */
export const ValidationProblem = Type.Object(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
    msg: Type.String(),
    type: Type.String(),
    input: Type.Optional(Type.Unknown()),
    ctx: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { $id: 'ValidationError' },
)

export const HTTPValidationError = Type.Object(
  { detail: Type.Array(Type.Ref(ValidationProblem)) },
  { $id: 'HTTPValidationError' },
)

export const HealthResponse = Type.Object(
  {
    status: Type.String({ examples: ['healthy'] }),
    timestamp: Type.Number({ description: 'Unix time in seconds, with fraction.' }),
  },
  { $id: 'HealthResponse' },
)

export const ReadinessResponse = Type.Object(
  {
    status: Type.String({ description: '"ready", or "not_ready" with status 503.', examples: ['ready'] }),
    timestamp: Type.Number(),
    checks: Nullable(Type.Record(Type.String(), Type.Boolean())),
    algorithms: Type.Optional(
      Type.Array(Type.String(), { description: '`algoserve worker` only: the algorithms it runs jobs of.' }),
    ),
  },
  { $id: 'ReadinessResponse' },
)

/** A route's response: a reference to a shared schema, with what this status means there. */
export const described = (schema: TSchema, description: string) => ({ ...Type.Ref(schema), description })

/** An error response of the job routes, wrapped under `detail`. */
export const wrappedError = (description: string) => described(WrappedErrorResponse, description)

/** The 422 of a route whose request failed its schema. */
export const validationFailed = described(HTTPValidationError, 'The request failed the schema.')

/**
 * Every schema with an $id, registered once with Fastify so routes can $ref them; POST /invoke's only
 * where its algorithm is served.
 */
export function sharedSchemas(algorithms: Registry): TSchema[] {
  const invoked = invokeAlgorithm(algorithms)
  if (invoked === undefined) return [Metadata, ...SHARED]
  // Its result under the result schema's own $id (the interface's name); the order is the components'.
  return [invoked.module.result as TSchema, Metadata, InvokeRequest, invokeResponse(invoked), ...SHARED]
}

const SHARED: TSchema[] = [
  JobStatus,
  JobRequest,
  JobCreateResponse,
  JobStatusResponse,
  JobProgress,
  JobListItem,
  JobListResponse,
  DeliveryAttempt,
  DeliveryHistoryResponse,
  JobSummaryResponse,
  ErrorResponse,
  WrappedErrorResponse,
  ValidationProblem,
  HTTPValidationError,
  HealthResponse,
  ReadinessResponse,
]

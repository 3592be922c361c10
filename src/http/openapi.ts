// The parts of the OpenAPI document that belong to no single route: its info, servers and tags, the
// webhook callback (OpenAPI 3.1 `webhooks`), the x-request-id header of every operation, and the API-key
// scheme when keys are configured; and what each operation's route declaration (route-declaration.ts)
// adds to it. routes/docs.ts hands these to @fastify/swagger. Every limit it states is read from the
// code or the settings that enforce it.
import { Type } from '@sinclair/typebox'
import { type Registry, servedPrimeChecker } from '../algorithms/registry.js'
import type { BoundSettings } from '../algorithms/request-bounds.js'
import { PayloadTooLargeError } from '../errors.js'
import { isoTime } from '../jobs/json-text.js'
import { LATENCY_BOUNDS_MS } from '../jobs/summary.js'
import { VERSION } from '../version.js'
import { RETRY_WAITS_MS } from '../webhooks/policy.js'
import { ATTEMPT_TIMEOUT_MS } from '../webhooks/sender.js'
import {
  algorithmExamples,
  describeParamDefaults,
  discriminateJobs,
  firstAlgorithmShown,
  jobRequestExamples,
  type NamedExample,
} from './algorithm-schemas.js'
import { REQUEST_ID as KEPT_REQUEST_ID } from './http-observer.js'
import { isRateLimited, type RouteDeclaration } from './route-declaration.js'
import { ErrorResponse, InvokeRequest, InvokeResponse, Metadata, PrimeResult } from './schemas.js'

// The document's own description, when the deployment gives none: PrimeChecker's part only where it is
// served.
const PRIME_CHECKER_INTRO = ' PrimeChecker tests an integer of any size for primality and factors it.'
const PRIME_CHECKER_NOTES = `* Numbers are read exactly: JSON integer literals of any length, or strings of decimal digits. Responses
  write them as exact JSON integers; a JavaScript client reads those above 2^53 with a lossless parser
  (docs/api.md, "JavaScript clients").
* The primality method depends on |number|: trial division below 2^32, deterministic Miller-Rabin below 2^64,
  Baillie-PSW above.
`
const NOTES = `* Error bodies: flat on /invoke, wrapped under \`detail\` on /jobs; 422 bodies follow FastAPI with pydantic v2.
* Every response carries \`x-request-id\`.
* Jobs that name a \`webhook\` are reported to it when they end: see the \`jobFinished\` webhook.
* Runs on the maintained Node.js lines: 22, 24 and 26 (and still on 20, past its end of life in April 2026).`

const ownDescription = (primeChecker: boolean) =>
  primeChecker
    ? `Algorithms over HTTP.${PRIME_CHECKER_INTRO}\n\n${PRIME_CHECKER_NOTES}${NOTES}`
    : `Algorithms over HTTP.\n\n${NOTES.replace('flat on /invoke', 'flat on /algorithms/{name}/invoke')}`

// The values the examples share.
const REQUEST_ID = 'b1946ac9-2ad7-4a5f-9c67-3d2f0c3e4f10'
const JOB_ID = '3e3682166bbe'
const flat = (error: string, message: string, details: Record<string, unknown> | null = null) => ({
  error,
  message,
  details,
  request_id: REQUEST_ID,
})
const wrapped = (error: string, message: string, details: Record<string, unknown> | null = null) => ({
  detail: flat(error, message, details),
})
const problem = (type: string, loc: (string | number)[], msg: string, input: unknown) => ({
  detail: [{ type, loc, msg, input }],
})
const PRIME_97 = {
  number: 97,
  is_prime: true,
  factors: [],
  factorization_complete: true,
  algorithm: 'trial_division',
}

/** The algorithm the job examples show, with params it takes and a result it gives. */
interface ShownAlgorithm {
  algorithm: string
  version: string
  params: unknown
  result: unknown
}

const PRIME_CHECKER_SHOWN: ShownAlgorithm = {
  algorithm: 'PrimeChecker',
  version: VERSION,
  params: { number: 97 },
  result: PRIME_97,
}

/** PrimeChecker where it is served, else the first algorithm by name. */
const shownAlgorithm = (algorithms: Registry): ShownAlgorithm =>
  servedPrimeChecker(algorithms) === undefined
    ? (firstAlgorithmShown(algorithms) ?? PRIME_CHECKER_SHOWN)
    : PRIME_CHECKER_SHOWN

const metadataOf = (shown: ShownAlgorithm) => ({
  algorithm: shown.algorithm,
  version: shown.version,
  elapsed_time: 0.000012,
})
const METADATA = metadataOf(PRIME_CHECKER_SHOWN)

export const TAGS = [
  { name: 'algorithms', description: 'Synchronous algorithm calls.' },
  { name: 'jobs', description: 'Asynchronous jobs, read by id, reported to a webhook when they end.' },
  { name: 'operations', description: 'Liveness, readiness and Prometheus metrics, for operators.' },
  {
    name: 'job-control',
    description:
      'Beyond the interface: cancel a job, list jobs, a summary of all jobs (counts by state, ends ' +
      'and latency per minute), read the history of its webhook; with an ' +
      'Idempotency-Key on POST /jobs and ?wait= on GET /jobs/{job_id}.',
  },
]

/** The deployment's own title, version and description of the document (settings); null for ours. */
export interface DocumentText {
  title: string | null
  version: string | null
  description: string | null
}

/** The title /docs and /redoc show. */
export const pageTitle = (text: DocumentText): string => text.title ?? 'Algoserve API'

export function documentInfo(text: DocumentText, algorithms: Registry) {
  return {
    openapi: '3.1.0',
    info: {
      title: text.title ?? 'Algoserve',
      version: text.version ?? VERSION,
      description: text.description ?? ownDescription(servedPrimeChecker(algorithms) !== undefined),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Relative: the document describes whichever host name and scheme it was fetched from.
    servers: [{ url: '/', description: 'This service' }],
    tags: TAGS,
    webhooks: { jobFinished: jobFinished(shownAlgorithm(algorithms)) },
  }
}

/** The callback's body, exactly the interface's payload. */
export const WebhookPayload = Type.Object(
  {
    job_id: Type.String({ pattern: '^[0-9a-f]{12}$' }),
    status: Type.Unsafe<'completed' | 'failed'>({ type: 'string', enum: ['completed', 'failed'] }),
    algorithm: Type.String({ examples: ['PrimeChecker'] }),
    result: Type.Union([Type.Ref(PrimeResult), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Union([Type.Ref(Metadata), Type.Null()]),
    completed_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookPayload', description: 'The body of the webhook callback.' },
)

/** Milliseconds as prose: 1000 is "1 s". */
const seconds = (ms: number) => `${ms / 1000} s`
/** Items in prose: "1 s, 5 s and 15 s". */
const inProse = (items: string[]) =>
  [items.slice(0, -1).join(', '), items.at(-1)].filter(Boolean).join(' and ')
const RETRIES = `at most ${RETRY_WAITS_MS.length} retries after waits of ${inProse(RETRY_WAITS_MS.map(seconds))}`
const ATTEMPT_TIMEOUT = seconds(ATTEMPT_TIMEOUT_MS)

const header = (description: string, example: string, required = true) => ({
  in: 'header',
  required,
  description,
  schema: { type: 'string' },
  example,
})

const jobFinished = (shown: ShownAlgorithm) => ({
  post: {
    summary: 'A job ended',
    operationId: 'jobFinished',
    tags: ['jobs'],
    description: [
      'Sent to the `webhook` URL of a job when it ends, `completed` or `failed`: an HTTP POST with',
      'Content-Type application/json, following the Standard Webhooks specification.',
      '',
      '* **Success** is any 2xx answer. Redirects are not followed and count as a failed attempt.',
      `* **Retries**: the first attempt, then ${RETRIES}; each`,
      `  attempt times out after ${ATTEMPT_TIMEOUT}. A 410 Gone stops the retries. Every attempt is counted in`,
      '  `webhook_deliveries_total{status}` (`success`, `retry`, `failed`).',
      '* **Signature**: with `ALGOSERVE_WEBHOOK_SECRET` set (`whsec_` + base64), `webhook-signature` is',
      "  `v1,` followed by the base64 HMAC-SHA256, keyed with the secret's decoded bytes, of",
      '  `{webhook-id}.{webhook-timestamp}.{body}`. Check it, and reject timestamps far from now.',
      '* **Targets** on loopback, private and other non-public addresses are refused unless',
      '  `ALGOSERVE_WEBHOOK_ALLOW_PRIVATE=true`.',
      '* Delivery never changes the job, and pending deliveries survive a restart of the service.',
    ].join('\n'),
    parameters: [
      { name: 'webhook-id', ...header('Id of this delivery, the same on every retry.', `msg_${JOB_ID}`) },
      { name: 'webhook-timestamp', ...header('Unix time of this attempt, in seconds.', '1795272943') },
      {
        name: 'webhook-signature',
        ...header(
          'Present when a signing secret is configured.',
          'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
          false,
        ),
      },
      { name: 'user-agent', ...header('The service and its version.', `algoserve/${VERSION}`) },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/WebhookPayload' },
          example: {
            job_id: JOB_ID,
            status: 'completed',
            algorithm: shown.algorithm,
            result: shown.result,
            error: null,
            metadata: metadataOf(shown),
            completed_at: '2026-11-21T16:15:09.141+00:00',
          },
        },
      },
    },
    responses: {
      '2XX': { description: 'Delivered; no more attempts.' },
      '410': { description: 'Gone: no more attempts.' },
      default: {
        description: `Any other answer, or none within ${ATTEMPT_TIMEOUT}: retried while retries remain.`,
      },
    },
  },
})

/** The scheme named by `security` when API keys are configured. */
export const API_KEY_SCHEME = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key accepted by ALGOSERVE_API_KEYS or ALGOSERVE_API_KEYS_FILE.',
  },
}

// Any value is accepted (no pattern: a client that checks the schema would refuse what the service
// takes): one that matches is kept, any other is replaced.
const REQUEST_ID_PARAMETER = {
  name: 'x-request-id',
  in: 'header',
  required: false,
  description:
    `Your id for this request. Any value is accepted: one that matches \`${KEPT_REQUEST_ID.source}\` ` +
    '(1 to 128 letters, digits and . _ : -) is kept; any other is replaced by a fresh UUID, as is a ' +
    'missing one. The id is echoed in the x-request-id response header, in `request_id` of the body ' +
    'and in every log line.',
  schema: { type: 'string' },
}

const REQUEST_ID_HEADER = {
  description:
    'The request id: the one sent when it is kept (see the x-request-id parameter), or a fresh UUID.',
  schema: { type: 'string' },
}

type Media = Record<string, { example?: unknown; examples?: unknown }>
type Operation = {
  operationId?: string
  parameters?: { name: string; in: string }[]
  requestBody?: { content?: Media }
  responses?: Record<string, { headers?: Record<string, unknown>; content?: Media }>
  security?: unknown
}

export interface DocumentOptions {
  /** With API keys, which routes need one (the scheme is declared, and required there); null without. */
  keyRequired: ((route: RouteDeclaration) => boolean) | null
  /** Rate limits are on: the rate-limited operations document their 429. */
  rateLimit: { rateLimit: number; rateLimitWindowMs: number } | null
  /** The body limit, shown in the 413 examples. */
  maxBodyBytes: number
  /** The settings of the request bounds, shown in GET /algorithms/{name}'s example. */
  bounds: BoundSettings
  /** The algorithms served: their examples, and the job shapes discriminated by algorithm. */
  algorithms: Registry
  /** The deployment's title, version and description. */
  text: DocumentText
}

/**
 * Adds what every operation shares: the x-request-id parameter and response header (every request
 * takes one; every response carries one), and what its route declares: with API keys, the security
 * requirement and its 401, and with rate limits, its 429. `declarationOf` gives the declaration of the
 * route behind an operation, by its operationId.
 */
export function completeDocument<T extends object>(
  document: T,
  declarationOf: (operationId: string | undefined) => RouteDeclaration,
  options: DocumentOptions,
): T {
  const examples: Examples = {
    ...EXAMPLES(
      options.maxBodyBytes,
      shownAlgorithm(options.algorithms),
      [...options.algorithms.keys()].sort(),
    ),
    ...algorithmExamples(options.algorithms, {
      requestId: REQUEST_ID,
      flat,
      tooLarge: flat(...tooLarge(options.maxBodyBytes)),
      bounds: options.bounds,
    }),
  }
  const jobRequests = jobRequestExamples(options.algorithms)
  if (jobRequests !== null && examples.createJob !== undefined)
    examples.createJob = { ...examples.createJob, request: undefined, requestExamples: jobRequests }
  const paths = (document as { paths?: Record<string, Record<string, Operation>> }).paths ?? {}
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const route = declarationOf(operation.operationId)
      const parameters = operation.parameters ?? []
      if (!parameters.some((p) => p.name === 'x-request-id' && p.in === 'header')) {
        operation.parameters = [...parameters, { $ref: '#/components/parameters/RequestId' } as never]
      }
      if (options.keyRequired?.(route)) {
        operation.security = [{ bearerAuth: [] }]
        operation.responses = { ...operation.responses, 401: unauthorized(route) }
      } else if (options.keyRequired !== null) {
        // Said explicitly where keys are on: this operation stays open.
        operation.security = []
      }
      if (options.rateLimit !== null && isRateLimited(route)) {
        operation.responses = { ...operation.responses, 429: rateLimited(route, options.rateLimit) }
      }
      addExamples(operation, examples)
      for (const response of Object.values(operation.responses ?? {})) {
        response.headers = { 'x-request-id': { $ref: '#/components/headers/RequestId' }, ...response.headers }
      }
    }
  }
  const components = (document as { components?: Record<string, unknown> }).components ?? {}
  const schemas = (components.schemas ?? {}) as Record<string, Record<string, unknown>>
  discriminateJobs(schemas, options.algorithms)
  if (servedPrimeChecker(options.algorithms) === undefined)
    withoutPrimeChecker(schemas, shownAlgorithm(options.algorithms))
  describeParamDefaults(schemas, options.algorithms)
  const webhooks = (document as { webhooks?: Record<string, Record<string, Operation>> }).webhooks ?? {}
  // The callback is signed (webhook-signature), not sent with our API keys.
  if (options.keyRequired !== null) {
    for (const item of Object.values(webhooks))
      for (const operation of Object.values(item)) operation.security = []
  }
  return {
    ...document,
    components: {
      ...components,
      parameters: { RequestId: REQUEST_ID_PARAMETER },
      headers: { RequestId: REQUEST_ID_HEADER },
      ...(options.keyRequired !== null ? { securitySchemes: API_KEY_SCHEME } : {}),
    },
  }
}

/** Without PrimeChecker: no schema of POST /invoke's, and the metadata's examples another algorithm's. */
function withoutPrimeChecker(schemas: Record<string, Record<string, unknown>>, shown: ShownAlgorithm): void {
  for (const id of [InvokeRequest.$id, InvokeResponse.$id, PrimeResult.$id]) delete schemas[id as string]
  const metadata = structuredClone(schemas[Metadata.$id as string]) as { properties: Record<string, Schema> }
  metadata.properties.algorithm = { ...metadata.properties.algorithm, examples: [shown.algorithm] }
  metadata.properties.version = { ...metadata.properties.version, examples: [shown.version] }
  schemas[Metadata.$id as string] = metadata
}

type Schema = Record<string, unknown>

/** An error response in the shape its route declares: wrapped under `detail` or flat. */
function errorResponse(route: RouteDeclaration, description: string, header: [string, string], body: object) {
  const isWrapped = route.errorShape === 'wrapped'
  return {
    description,
    headers: { [header[0]]: { schema: { type: 'string' }, example: header[1] } },
    content: {
      'application/json': {
        schema: { $ref: `#/components/schemas/${isWrapped ? 'WrappedErrorResponse' : ErrorResponse.$id}` },
        example: isWrapped ? { detail: body } : body,
      },
    },
  }
}

const unauthorized = (route: RouteDeclaration) =>
  errorResponse(
    route,
    'UNAUTHORIZED: no API key, or one that is not accepted; see WWW-Authenticate.',
    ['www-authenticate', 'Bearer realm="algoserve"'],
    flat('UNAUTHORIZED', 'An API key is required: send Authorization: Bearer <key>.'),
  )

const rateLimited = (route: RouteDeclaration, limit: { rateLimit: number; rateLimitWindowMs: number }) =>
  errorResponse(
    route,
    `RATE_LIMITED: more than ${limit.rateLimit} requests from this client in ${limit.rateLimitWindowMs / 1000} s.`,
    ['retry-after', '12'],
    flat(
      'RATE_LIMITED',
      `Too many requests: at most ${limit.rateLimit} per ${limit.rateLimitWindowMs / 1000} s; try again later.`,
      { limit: limit.rateLimit, window_seconds: limit.rateLimitWindowMs / 1000 },
    ),
  )

const UNAVAILABLE = 'The job store is unavailable; try again later.'

const JOB_ID_PROBLEM = {
  detail: [
    {
      type: 'string_pattern_mismatch',
      loc: ['path', 'job_id'],
      msg: "String should match pattern '^[0-9a-f]{12}$'",
      input: 'not-an-id',
      ctx: { pattern: '^[0-9a-f]{12}$' },
    },
  ],
}

const cancelledJob = (shown: ShownAlgorithm) => ({
  job_id: JOB_ID,
  status: 'failed',
  algorithm: shown.algorithm,
  created_at: '2026-11-21T16:15:09.138+00:00',
  started_at: '2026-11-21T16:15:09.139+00:00',
  completed_at: '2026-11-21T16:15:12.402+00:00',
  result: null,
  error: 'The job was cancelled.',
  metadata: null,
})

/** The latency buckets of a summary's minute: these counts in these buckets, the others empty. */
const latencyBuckets = (counts: Record<number, number>) =>
  LATENCY_BOUNDS_MS.map((_, i) => counts[i] ?? 0).concat(0)

/** A webhook's first attempt timed out, and the retry after the first wait was answered. */
const FIRST_ATTEMPT_AT = Date.parse('2026-11-21T16:15:09.150Z')
const TIMED_OUT_MS = ATTEMPT_TIMEOUT_MS + 11.2
const RETRY_AT = FIRST_ATTEMPT_AT + Math.round(TIMED_OUT_MS) + (RETRY_WAITS_MS[0] ?? 0)

/** The 413 answer to a body over this limit, as `flat` and `wrapped` take it. */
const tooLarge = (limitBytes: number) => {
  const error = new PayloadTooLargeError(limitBytes)
  return [error.code, error.message, { ...error.details }] as const
}

type Examples = Record<
  string,
  {
    request?: unknown
    /** Several request bodies, named, in place of `request`. */
    requestExamples?: Record<string, NamedExample>
    parameters?: Record<string, unknown>
    responses: Record<string, unknown>
  }
>

/**
 * An example for each request body and each status, by operationId: the one shown for a status is
 * what that status answers (a shared schema's example would show one code for every status). A request
 * example is what "Try it out" sends, so each one succeeds.
 */
const EXAMPLES = (maxBodyBytes: number, shown: ShownAlgorithm, available: string[]): Examples => {
  const cancelled = cancelledJob(shown)
  return {
    invoke: {
      request: { number: 97 },
      responses: {
        200: { request_id: REQUEST_ID, status: 'success', result: PRIME_97, metadata: METADATA },
        400: flat('VALIDATION_ERROR', 'number has 5000 digits; at most 4300 are allowed.', {
          field: 'number',
          value: '1234567890…(5000 digits)',
        }),
        413: flat(...tooLarge(maxBodyBytes)),
        422: problem(
          'int_from_float',
          ['body', 'number'],
          'Input should be a valid integer, got a number with a fractional part',
          1.5,
        ),
        500: flat('INTERNAL_ERROR', 'Internal server error.'),
        503: flat('SERVICE_UNAVAILABLE', 'Every worker thread is busy; try again later.'),
      },
    },
    createJob: {
      request: { algorithm: shown.algorithm, params: shown.params },
      responses: {
        202: {
          job_id: JOB_ID,
          status: 'pending',
          message: 'Job accepted; GET /jobs/{job_id} tells its status.',
          created_at: '2026-11-21T16:15:09.138+00:00',
        },
        400: wrapped('VALIDATION_ERROR', 'Invalid webhook URL: not an absolute URL.', {
          field: 'webhook',
          value: 'not a url',
        }),
        404: wrapped('ALGORITHM_NOT_FOUND', "Algorithm 'Sorter' is not known.", {
          available_algorithms: available,
        }),
        409: wrapped(
          'IDEMPOTENCY_KEY_REUSED',
          'This Idempotency-Key was used for a different request; use a new key for a new request.',
        ),
        413: wrapped(...tooLarge(maxBodyBytes)),
        422: problem('missing', ['body', 'params'], 'Field required', { algorithm: shown.algorithm }),
        503: wrapped('SERVICE_UNAVAILABLE', UNAVAILABLE),
      },
    },
    getJob: {
      parameters: { job_id: JOB_ID },
      responses: {
        200: {
          job_id: JOB_ID,
          status: 'completed',
          algorithm: shown.algorithm,
          created_at: '2026-11-21T16:15:09.138+00:00',
          started_at: '2026-11-21T16:15:09.139+00:00',
          completed_at: '2026-11-21T16:15:09.141+00:00',
          result: shown.result,
          error: null,
          metadata: metadataOf(shown),
        },
        404: wrapped('JOB_NOT_FOUND', `Job '${JOB_ID}' does not exist or has expired.`),
        422: JOB_ID_PROBLEM,
        503: wrapped('SERVICE_UNAVAILABLE', UNAVAILABLE),
      },
    },
    cancelJob: {
      parameters: { job_id: JOB_ID },
      responses: {
        200: cancelled,
        404: wrapped('JOB_NOT_FOUND', `Job '${JOB_ID}' does not exist or has expired.`),
        409: wrapped(
          'JOB_ALREADY_FINISHED',
          `Job '${JOB_ID}' has already ended (completed); it cannot be cancelled.`,
          { status: 'completed' },
        ),
        422: JOB_ID_PROBLEM,
        503: wrapped('SERVICE_UNAVAILABLE', UNAVAILABLE),
      },
    },
    listJobs: {
      parameters: { status: 'failed', limit: 50 },
      responses: {
        200: {
          jobs: [
            {
              ...cancelled,
              job_id: '5e2a7c01d9b4',
              status: 'running',
              completed_at: null,
              error: null,
              progress: { progress: 0.42, message: 'sieve: 812 of 1,930 relations' },
            },
            { ...cancelled, progress: null },
          ],
          next_cursor: 'MTc5NTI3Mjk0MzEzOC5hMWIyYzNkNGU1ZjY',
        },
        422: problem(
          'enum',
          ['query', 'status'],
          "Input should be 'pending', 'running', 'completed' or 'failed'",
          'done',
        ),
        503: wrapped('SERVICE_UNAVAILABLE', UNAVAILABLE),
      },
    },
    getJobSummary: {
      responses: {
        200: {
          counts: { pending: 12, running: 2, completed: 18204, failed: 31 },
          latency_bounds_ms: [...LATENCY_BOUNDS_MS],
          ended_per_minute: [
            {
              minute: '2026-11-21T16:01:00.000+00:00',
              completed: 1204,
              failed: 2,
              latency_ms: {
                buckets: latencyBuckets({ 2: 3, 3: 410, 4: 622, 5: 160, 6: 11 }),
                sum: 19870,
              },
            },
            {
              minute: '2026-11-21T16:15:00.000+00:00',
              completed: 410,
              failed: 1,
              latency_ms: {
                buckets: latencyBuckets({ 2: 1, 3: 150, 4: 201, 5: 55, 6: 4 }),
                sum: 6702,
              },
            },
          ],
        },
        503: wrapped('SERVICE_UNAVAILABLE', UNAVAILABLE),
      },
    },
    streamJobEvents: {
      parameters: { job_id: JOB_ID },
      responses: {
        200:
          'retry: 1000\n\n' +
          `id: 1.r.0\nevent: state\ndata: {"job_id":"${JOB_ID}","status":"running","started_at":"2026-11-21T16:15:09.139+00:00"}\n\n` +
          'id: 1.r.7\nevent: progress\ndata: {"progress":0.42,"message":"sieve: 812 of 1,930 relations"}\n\n' +
          `id: 1.f.0\nevent: end\ndata: ${JSON.stringify(cancelled)}\n\n`,
        404: wrapped('JOB_NOT_FOUND', `Job '${JOB_ID}' does not exist or has expired.`),
        422: JOB_ID_PROBLEM,
        503: wrapped('SERVICE_UNAVAILABLE', UNAVAILABLE),
      },
    },
    getJobDeliveries: {
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
        404: wrapped('JOB_NOT_FOUND', `Job '${JOB_ID}' does not exist or has expired.`),
        422: JOB_ID_PROBLEM,
        503: wrapped('SERVICE_UNAVAILABLE', UNAVAILABLE),
      },
    },
    healthz: { responses: { 200: { status: 'healthy', timestamp: 1795272943.268 } } },
    readyz: {
      responses: {
        200: { status: 'ready', timestamp: 1795272943.268, checks: { algorithm: true, store: true } },
        503: { status: 'not_ready', timestamp: 1795272943.268, checks: { algorithm: true, store: false } },
      },
    },
    metrics: {
      responses: {
        200: '# HELP http_requests_total HTTP requests.\n# TYPE http_requests_total counter\nhttp_requests_total{method="POST",endpoint="/invoke",status="200"} 3\n',
      },
    },
  }
}

function addExamples(operation: Operation, all: Examples): void {
  const examples = all[operation.operationId ?? '']
  if (examples === undefined) return
  const setExample = (content: Media | undefined, example: unknown) => {
    for (const media of Object.values(content ?? {})) media.example = example
  }
  if (examples.request !== undefined) setExample(operation.requestBody?.content, examples.request)
  if (examples.requestExamples !== undefined) {
    for (const media of Object.values(operation.requestBody?.content ?? {}))
      media.examples = examples.requestExamples
  }
  for (const parameter of operation.parameters ?? []) {
    const example = examples.parameters?.[parameter.name]
    if (example !== undefined) Object.assign(parameter, { example })
  }
  for (const [status, example] of Object.entries(examples.responses)) {
    setExample(operation.responses?.[status]?.content, example)
  }
}

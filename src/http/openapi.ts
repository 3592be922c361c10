// The parts of the OpenAPI document that belong to no single route: its info, servers and tags, the
// webhook callback (OpenAPI 3.1 `webhooks`), the x-request-id header of every operation, and the API-key
// scheme when keys are configured; and what each operation's route declaration (route-declaration.ts)
// and its examples (examples.ts) add to it, and the job shapes per algorithm (algorithm-schemas.ts).
// routes/docs.ts hands these to @fastify/swagger. Every limit it states is read from the code or the
// settings that enforce it.
import { type BuiltInModule, SERVICE_NOTES } from '../algorithms/algorithm.js'
import { invokeAlgorithm, type Registry } from '../algorithms/registry.js'
import { VERSION } from '../version.js'
import { RETRY_WAITS_MS } from '../webhooks/policy.js'
import { ATTEMPT_TIMEOUT_MS } from '../webhooks/sender.js'
import { metadataOf, type ShownAlgorithm, shownAlgorithm } from './algorithm-examples.js'
import { describeParamDefaults, jobsByAlgorithm } from './algorithm-schemas.js'
import { type ExampleContext, flat, JOB_ID, type OperationExamples } from './examples.js'
import { REQUEST_ID as KEPT_REQUEST_ID } from './http-observer.js'
import { isRateLimited, type RouteDeclaration } from './route-declaration.js'
import { ErrorResponse, Metadata } from './schemas.js'

// The document's own description, when the deployment gives none: the notes of POST /invoke's algorithm
// only where it is served.
const NOTES = `* Error bodies: flat on /invoke, wrapped under \`detail\` on /jobs; 422 bodies follow FastAPI with pydantic v2.
* Every response carries \`x-request-id\`.
* Jobs that name a \`webhook\` are reported to it when they end: see the \`jobFinished\` webhook.
* Runs on the maintained Node.js lines: 22, 24 and 26 (and still on 20, past its end of life in April 2026).`

function ownDescription(algorithms: Registry): string {
  const invoked = invokeAlgorithm(algorithms)
  if (invoked === undefined)
    return `Algorithms over HTTP.\n\n${NOTES.replace('flat on /invoke', 'flat on /algorithms/{name}/invoke')}`
  const own = (invoked.module as BuiltInModule)[SERVICE_NOTES]
  return `Algorithms over HTTP.${own === undefined ? '' : ` ${own.intro}`}\n\n${own?.notes ?? ''}${NOTES}`
}

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
      description: text.description ?? ownDescription(algorithms),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Relative: the document describes whichever host name and scheme it was fetched from.
    servers: [{ url: '/', description: 'This service' }],
    tags: TAGS,
    webhooks: { jobFinished: jobFinished(shownAlgorithm(algorithms)) },
  }
}

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
  /** The route's examples (examples.ts), written into the operation and removed. */
  'x-examples'?: (context: ExampleContext) => OperationExamples
}

export interface DocumentOptions {
  /** With API keys, which routes need one (the scheme is declared, and required there); null without. */
  keyRequired: ((route: RouteDeclaration) => boolean) | null
  /** Rate limits are on: the rate-limited operations document their 429. */
  rateLimit: { rateLimit: number; rateLimitWindowMs: number } | null
  /** The algorithms served: their examples, and the job shapes, one branch per algorithm. */
  algorithms: Registry
  /** The deployment's title, version and description. */
  text: DocumentText
}

/**
 * Adds what every operation shares: the x-request-id parameter and response header (every request
 * takes one; every response carries one), what its route declares: with API keys, the security
 * requirement and its 401, and with rate limits, its 429; and the examples its route gives. The job
 * shapes get a branch per algorithm. `declarationOf` gives the declaration of the route behind an
 * operation, by its operationId.
 */
export function completeDocument<T extends object>(
  document: T,
  declarationOf: (operationId: string | undefined) => RouteDeclaration,
  options: DocumentOptions,
): T {
  const shown = shownAlgorithm(options.algorithms)
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
      const examples = operation['x-examples']
      delete operation['x-examples']
      if (examples !== undefined) addExamples(operation, examples({ shown }))
      for (const response of Object.values(operation.responses ?? {})) {
        response.headers = { 'x-request-id': { $ref: '#/components/headers/RequestId' }, ...response.headers }
      }
    }
  }
  const components = (document as { components?: Record<string, unknown> }).components ?? {}
  const schemas = (components.schemas ?? {}) as Record<string, Record<string, unknown>>
  jobsByAlgorithm(schemas, options.algorithms)
  showMetadataOf(schemas, shown)
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

/** The metadata's members with the shown algorithm's name and version as their examples. */
function showMetadataOf(schemas: Record<string, Record<string, unknown>>, shown: ShownAlgorithm): void {
  const metadata = structuredClone(schemas[Metadata.$id as string]) as { properties: Record<string, Schema> }
  metadata.properties.algorithm = { examples: [shown.algorithm], ...metadata.properties.algorithm }
  metadata.properties.version = { examples: [shown.version], ...metadata.properties.version }
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

function addExamples(operation: Operation, examples: OperationExamples): void {
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

// POST /jobs (check, hand to the job backend, answer 202; a consumer runs it) and GET /jobs/{job_id};
// with job control (docs/jobs.md), an Idempotency-Key on the first and a wait for the job's end on the
// second. The store's troubles become 503 in the error handler.
import { createHash } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { stringify } from 'lossless-json'
import type { Algorithm, ParamLimits, RequestBounds } from '../algorithms/algorithm.js'
import { readParams } from '../algorithms/params.js'
import { invokeAlgorithm, type Registry } from '../algorithms/registry.js'
import { type BoundOwner, type BoundSettings, largestBounds } from '../algorithms/request-bounds.js'
import { AlgorithmNotFoundError, DuplicateJobIdError, JobNotFoundError } from '../errors.js'
import { jobRequestExamples, metadataOf } from '../http/algorithm-examples.js'
import { algorithmBounds, bodyBounds, checkJobBody } from '../http/body-bounds.js'
import {
  JOB_ID,
  JOB_ID_PROBLEM,
  JOB_NOT_FOUND,
  problem,
  STORE_UNAVAILABLE,
  tooLarge,
  wrapped,
} from '../http/examples.js'
import { addBodyParsers } from '../http/json-body.js'
import { sendJsonText } from '../http/json-reply.js'
import {
  described,
  JobCreateResponse,
  JobIdParams,
  JobRequest,
  JobStatusResponse,
  validationFailed,
  wrappedError,
} from '../http/schemas.js'
import type { IdempotencyClaim, JobBackend } from '../jobs/backend.js'
import { EndWaits } from '../jobs/end-waits.js'
import { isEnded, type NewJob } from '../jobs/job.js'
import {
  JOB_INCLUDES,
  type JobInclude,
  jobStatusJson,
  jobStatusWithJson,
  newJobId,
} from '../jobs/job-view.js'
import { isoTime } from '../jobs/json-text.js'
import { ServedAlgorithms, unservedMessage } from '../jobs/served.js'
import type { Metrics } from '../metrics/metrics.js'
import { tracing } from '../tracing/seams.js'
import { checkWebhookUrl } from '../webhooks/address-policy.js'

export interface JobRouteOptions {
  algorithms: Registry
  backend: JobBackend
  metrics: Metrics
  /** The settings of the request bounds: the named algorithm's own are in effect. */
  bounds: BoundSettings
  webhookAllowPrivate: boolean
  /** Waits on GET /jobs/{job_id}?wait= held at once. */
  maxJobWaiters: number
}

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      pattern: '^[\\x20-\\x7E]{1,255}$',
      description:
        '1 to 255 printable ASCII characters. The same key with the same request within ' +
        'ALGOSERVE_JOB_TTL_SECONDS answers with the job it created (202, Idempotent-Replayed: true); with ' +
        'another request, 409 IDEMPOTENCY_KEY_REUSED. Job control.',
    }),
  ),
})

// A comma-separated list of JOB_INCLUDES, so that more members can be asked for together.
const includeWord = `(?:${JOB_INCLUDES.join('|')})`

const JobQuery = Type.Object({
  include: Type.Optional(
    Type.String({
      pattern: `^${includeWord}(?:,${includeWord})*$`,
      description:
        "Members to add to the job's body, comma-separated: `params`, the params as the job stored them after " +
        "their check (integers exact). Without it the body is the interface's. Job control.",
      examples: ['params'],
    }),
  ),
  // Typed as the query's text, which is what arrives: validation checks it reads as a number, and does not
  // convert it.
  wait: Type.Optional(
    Type.Unsafe<string>({
      type: 'number',
      minimum: 0,
      maximum: 60,
      description:
        'Seconds to wait for the job to end: the answer comes as soon as it is completed or failed, or when ' +
        'the wait is over, with its state then. Beyond ALGOSERVE_MAX_JOB_WAITERS waits held at once it ' +
        'answers at once, with Wait-Skipped: true. Job control.',
    }),
  ),
})

/** An algorithm's request bounds as POST /jobs holds a body to them. */
interface AlgorithmBounds {
  bounds: RequestBounds
  owner: BoundOwner
  paramLimits: ParamLimits
  /** Below the bounds the body is read under in some way: the body is checked again. */
  tighter: boolean
}

/** The invoked algorithm's number refused too, where it is served. */
const badNumber = (algorithms: Registry) => {
  const invoked = invokeAlgorithm(algorithms)
  return invoked === undefined ? '' : ` or a bad ${invoked.name} number`
}

export const jobsRoutes: FastifyPluginAsyncTypebox<JobRouteOptions> = async (app, options) => {
  const { algorithms, backend, metrics } = options
  // The body names its algorithm: it is read under the largest bounds of any (this plugin is a context
  // of its own), then held to the named algorithm's.
  const largest = largestBounds(algorithms.all(), options.bounds)
  const boundsOf = (algorithm: Algorithm): AlgorithmBounds => {
    const { bounds, owner, paramLimits } = algorithmBounds(algorithm, options.bounds)
    const tighter =
      bounds.maxBodyBytes < largest.maxBodyBytes ||
      bounds.maxJsonValues < largest.maxJsonValues ||
      bounds.maxJsonDepth < largest.maxJsonDepth ||
      bounds.maxStringLength < largest.maxStringLength
    return { bounds, owner, paramLimits, tighter }
  }
  // By version: a reload brings new ones, whose bounds are worked out at their first job.
  const own = new WeakMap<Algorithm, AlgorithmBounds>()
  for (const algorithm of algorithms.all()) own.set(algorithm, boundsOf(algorithm))
  const readOwner: BoundOwner = { settings: options.bounds }
  // The parse's counts are kept only when some algorithm's bounds are below the largest.
  const measured = algorithms.all().some((algorithm) => own.get(algorithm)?.tighter)
  addBodyParsers(app, bodyBounds(largest, readOwner, measured))
  const waiters = new EndWaits(options.maxJobWaiters)
  const served = new ServedAlgorithms(() => backend.workers())
  // Subscribed at the first wait: an app whose clients never wait holds no subscription.
  let subscribed: Promise<void> | undefined
  const subscribe = () => {
    subscribed ??= backend.onEnded((id) => waiters.signal(id))
    return subscribed
  }

  app.post(
    '/jobs',
    {
      bodyLimit: largest.maxBodyBytes,
      config: { kind: 'api', errorShape: 'wrapped', boundOwner: readOwner },
      schema: {
        summary: 'Create an asynchronous job',
        operationId: 'createJob',
        tags: ['jobs'],
        description:
          'Checks, in order: the schema (422), the algorithm name (404), its params (400 for an integer with ' +
          `too many digits${badNumber(algorithms)}; ` +
          '422 for params that fail the algorithm\'s params schema, loc ["body", "params", ...]), the ' +
          'webhook URL (400), ' +
          'capacity and store (503 with Retry-After). With an Idempotency-Key header (job control), a request ' +
          'repeated with the same key and the same checked request (algorithm, params, webhook) answers with ' +
          'the job the first one created and the header Idempotent-Replayed: true.',
        headers: IdempotencyHeaders,
        body: Type.Ref(JobRequest),
        response: {
          202: described(
            JobCreateResponse,
            'The job was created and waits to run (or, replayed, was created). When no live worker takes ' +
              'jobs of its algorithm, `message` says so: the job waits until one does.',
          ),
          400: wrappedError('VALIDATION_ERROR: bad params or webhook; details names the field.'),
          404: wrappedError('ALGORITHM_NOT_FOUND; details.available_algorithms lists the known names.'),
          409: wrappedError('IDEMPOTENCY_KEY_REUSED: this Idempotency-Key came with another request.'),
          413: wrappedError(
            "PAYLOAD_TOO_LARGE: the body is larger than the named algorithm's maxBodyBytes (else ALGOSERVE_MAX_BODY_BYTES).",
          ),
          422: validationFailed,
          503: wrappedError(
            'SERVICE_UNAVAILABLE: no capacity or the job store is unavailable; see Retry-After.',
          ),
        },
        'x-examples': ({ shown }) => ({
          requestExamples: jobRequestExamples(algorithms),
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
              available_algorithms: algorithms.names(),
            }),
            409: wrapped(
              'IDEMPOTENCY_KEY_REUSED',
              'This Idempotency-Key was used for a different request; use a new key for a new request.',
            ),
            413: wrapped(...tooLarge(options.bounds.maxBodyBytes)),
            422: problem('missing', ['body', 'params'], 'Field required', { algorithm: shown.algorithm }),
            503: STORE_UNAVAILABLE,
          },
        }),
      },
    },
    async (request, reply) => {
      const { body } = request
      const algorithm = algorithms.defaultOf(body.algorithm)
      if (algorithm === undefined) throw new AlgorithmNotFoundError(body.algorithm, algorithms.names())
      let bounds = own.get(algorithm)
      if (bounds === undefined) {
        bounds = boundsOf(algorithm)
        own.set(algorithm, bounds)
      }
      if (bounds.tighter) await checkJobBody(request, bounds.bounds, bounds.owner)
      const parsed = readParams(algorithm, body.params, bounds.paramLimits, ['body', 'params'])
      const params = stringify(parsed) as string
      const cheap = algorithm.inline?.isCheap(parsed) ?? false
      const webhook =
        body.webhook === undefined || body.webhook === null
          ? null
          : checkWebhookUrl(body.webhook, options.webhookAllowPrivate)
      const key = request.headers['idempotency-key']
      const idempotency: IdempotencyClaim | undefined =
        key === undefined
          ? undefined
          : {
              key,
              // The checked request, so that the same number written another way is the same request.
              fingerprint: createHash('sha256')
                .update(JSON.stringify([algorithm.name, params, webhook]))
                .digest('hex'),
            }
      const createdAt = Date.now()
      // 48 random bits: a clash is rare enough that one fresh draw settles it.
      const job: NewJob = { id: newJobId(), algorithm: algorithm.name, params, webhook, cheap, createdAt }
      const submitted = await tracing.submit(job, () =>
        backend.submit(job, idempotency).catch((error) => {
          if (!(error instanceof DuplicateJobIdError)) throw error
          return backend.submit({ ...job, id: newJobId() }, idempotency)
        }),
      )
      if (submitted.replayed) reply.header('idempotent-replayed', 'true')
      else metrics.jobsCreated.inc({ algorithm: algorithm.name })
      reply.code(202)
      return {
        job_id: submitted.id,
        status: 'pending',
        message: (await served.unserved(algorithm.name))
          ? unservedMessage(algorithm.name)
          : 'Job accepted; GET /jobs/{job_id} tells its status.',
        created_at: isoTime(submitted.createdAt),
      }
    },
  )

  app.get(
    '/jobs/:job_id',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: 'Read a job',
        operationId: 'getJob',
        tags: ['jobs'],
        description:
          'The job as JobStatusResponse. A pending job that no live worker takes (none serves its algorithm ' +
          'now) carries one more member, `message` (a string), saying so; no other body has it.',
        params: JobIdParams,
        querystring: JobQuery,
        response: {
          200: described(
            JobStatusResponse,
            'The job, in whatever state it is; with include=params, also its `params` (an object).',
          ),
          404: wrappedError('JOB_NOT_FOUND: the job does not exist or has expired.'),
          422: validationFailed,
          503: wrappedError('SERVICE_UNAVAILABLE: the job store is unavailable.'),
        },
        'x-examples': ({ shown }) => ({
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
            404: JOB_NOT_FOUND,
            422: JOB_ID_PROBLEM,
            503: STORE_UNAVAILABLE,
          },
        }),
      },
    },
    async (request, reply) => {
      const { job_id: id } = request.params
      const read = () => backend.read(id, Date.now())
      let job = await read()
      if (job === null) throw new JobNotFoundError(id)
      const { wait, include } = request.query
      const waitMs = wait === undefined ? 0 : Number(wait) * 1000
      if (waitMs > 0 && !isEnded(job.status)) {
        const hold = waiters.hold(id)
        if (hold === null) {
          reply.header('wait-skipped', 'true')
        } else {
          // No loop per client: the backend's one subscription wakes this wait (jobs/end-waits.ts); a
          // client that goes away releases it.
          const gone = () => hold.release()
          reply.raw.once('close', gone)
          let timer: NodeJS.Timeout | undefined
          try {
            await subscribe()
            const deadline = new Promise<void>((resolve) => {
              timer = setTimeout(resolve, waitMs)
            })
            const deadlineAt = Date.now() + waitMs
            for (;;) {
              const woken = hold.next()
              // Read after the wait is held, so that an end just before it is not missed.
              job = await read()
              if (job === null || isEnded(job.status) || Date.now() >= deadlineAt || reply.raw.destroyed)
                break
              await Promise.race([woken, deadline])
            }
          } finally {
            clearTimeout(timer)
            reply.raw.off('close', gone)
            hold.release()
          }
          if (job === null) throw new JobNotFoundError(id)
        }
      }
      // Written from the stored JSON directly (job-view.ts); the schema above documents it.
      let body =
        include === undefined
          ? jobStatusJson(job)
          : jobStatusWithJson(job, new Set(include.split(',') as JobInclude[]))
      if (job.status === 'pending' && (await served.unserved(job.algorithm)))
        body = `${body.slice(0, -1)},"message":${JSON.stringify(unservedMessage(job.algorithm))}}`
      return sendJsonText(reply, body)
    },
  )
}

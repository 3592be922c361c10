// POST /jobs (check, hand to the job backend, answer 202; a consumer runs it) and GET /jobs/{job_id}.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { stringify } from 'lossless-json'
import type { Algorithm } from '../algorithms/algorithm.js'
import { AlgorithmNotFoundError, JobNotFoundError, ServiceUnavailableError } from '../errors.js'
import {
  described,
  HTTPValidationError,
  JobCreateResponse,
  JobIdParams,
  JobRequest,
  type JobRequestBody,
  JobStatusResponse,
  WrappedErrorResponse,
} from '../http/schemas.js'
import type { JobBackend } from '../jobs/backend.js'
import { isoTime, jobStatusJson, newJobId } from '../jobs/job-view.js'
import { DuplicateJobIdError, StoreFullError, StoreUnavailableError } from '../jobs/store.js'
import type { Metrics } from '../metrics/metrics.js'
import { checkWebhookUrl } from '../webhooks/address-policy.js'

export interface JobRouteOptions {
  algorithms: ReadonlyMap<string, Algorithm>
  backend: () => JobBackend
  metrics: Metrics
  maxDigits: number
  webhookAllowPrivate: boolean
}

/** Seconds a client is asked to wait after a 503. */

/** The store's troubles as the contract's 503; anything else stays what it is. */
function unavailable(error: unknown): unknown {
  if (error instanceof StoreFullError) {
    return new ServiceUnavailableError('Too many jobs are waiting; try again later.')
  }
  if (error instanceof StoreUnavailableError) {
    return new ServiceUnavailableError('The job store is unavailable; try again later.')
  }
  return error
}

const wrappedError = (description: string) => described(WrappedErrorResponse, description)
const validationFailed = described(HTTPValidationError, 'The request failed the schema.')

export async function jobsRoutes(app: FastifyInstance, options: JobRouteOptions): Promise<void> {
  const { algorithms, backend, metrics, maxDigits } = options

  app.post(
    '/jobs',
    {
      config: { errorShape: 'wrapped' },
      schema: {
        summary: 'Create an asynchronous job',
        operationId: 'createJob',
        tags: ['jobs'],
        description:
          'Checks, in order: the schema (422), the algorithm name (404), its params (400), the webhook URL (400), ' +
          'capacity and store (503 with Retry-After).',
        body: Type.Ref(JobRequest),
        response: {
          202: described(JobCreateResponse, 'The job was created and waits to run.'),
          400: wrappedError('VALIDATION_ERROR: bad params or webhook; details names the field.'),
          404: wrappedError('ALGORITHM_NOT_FOUND; details.available_algorithms lists the known names.'),
          413: wrappedError('PAYLOAD_TOO_LARGE.'),
          422: validationFailed,
          503: wrappedError(
            'SERVICE_UNAVAILABLE: no capacity or the job store is unavailable; see Retry-After.',
          ),
        },
      },
    },
    async (request, reply) => {
      const body = request.body as JobRequestBody
      const algorithm = algorithms.get(body.algorithm)
      if (algorithm === undefined) throw new AlgorithmNotFoundError(body.algorithm, [...algorithms.keys()])
      const parsed = algorithm.parseParams(body.params, { maxDigits }, 'params.')
      const params = stringify(parsed) as string
      const cheap = algorithm.isCheap(parsed)
      const webhook =
        body.webhook === undefined || body.webhook === null
          ? null
          : checkWebhookUrl(body.webhook, options.webhookAllowPrivate)
      const createdAt = Date.now()
      let id = newJobId()
      try {
        // 48 random bits: a clash is rare enough that one fresh draw settles it.
        const job = { id, algorithm: algorithm.name, params, webhook, cheap, createdAt }
        await backend()
          .submit(job)
          .catch((error) => {
            if (!(error instanceof DuplicateJobIdError)) throw error
            id = newJobId()
            return backend().submit({ ...job, id })
          })
      } catch (error) {
        throw unavailable(error)
      }
      metrics.jobsCreated.inc({ algorithm: algorithm.name })
      reply.code(202)
      return {
        job_id: id,
        status: 'pending',
        message: 'Job accepted; GET /jobs/{job_id} tells its status.',
        created_at: isoTime(createdAt),
      }
    },
  )

  app.get(
    '/jobs/:job_id',
    {
      config: { errorShape: 'wrapped' },
      schema: {
        summary: 'Read a job',
        operationId: 'getJob',
        tags: ['jobs'],
        params: JobIdParams,
        response: {
          200: described(JobStatusResponse, 'The job, in whatever state it is.'),
          404: wrappedError('JOB_NOT_FOUND: the job does not exist or has expired.'),
          422: validationFailed,
          503: wrappedError('SERVICE_UNAVAILABLE: the job store is unavailable.'),
        },
      },
    },
    async (request, reply) => {
      const { job_id: id } = request.params as { job_id: string }
      const job = await backend()
        .read(id, Date.now())
        .catch((error) => {
          throw unavailable(error)
        })
      if (job === null) throw new JobNotFoundError(id)
      // Written from the stored JSON directly (job-view.ts); the schema above documents it.
      return reply.type('application/json; charset=utf-8').serializer(String).send(jobStatusJson(job))
    },
  )
}

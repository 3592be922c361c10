// POST /jobs and GET /jobs/{job_id}. Their schemas and checks are in place; there is no job store yet,
// so an accepted job is answered 503 SERVICE_UNAVAILABLE (the async-jobs issue adds the store).
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Algorithm } from '../algorithms/algorithm.js'
import { AlgorithmNotFoundError, ServiceUnavailableError } from '../errors.js'
import {
  described,
  HTTPValidationError,
  JobCreateResponse,
  JobIdParams,
  JobRequest,
  type JobRequestBody,
  JobStatusResponse,
  WrappedErrorResponse,
} from '../schemas.js'

export interface JobRouteOptions {
  algorithms: ReadonlyMap<string, Algorithm>
  maxDigits: number
}

const wrappedError = (description: string) => described(WrappedErrorResponse, description)
const validationFailed = described(HTTPValidationError, 'The request failed the schema.')

export async function jobRoutes(app: FastifyInstance, options: JobRouteOptions): Promise<void> {
  const { algorithms, maxDigits } = options

  app.post(
    '/jobs',
    {
      config: { errorShape: 'wrapped' },
      schema: {
        summary: 'Create an asynchronous job',
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
    async (request) => {
      const body = request.body as JobRequestBody
      const algorithm = algorithms.get(body.algorithm)
      if (algorithm === undefined) throw new AlgorithmNotFoundError(body.algorithm, [...algorithms.keys()])
      algorithm.parseParams(body.params, { maxDigits }, 'params.')
      throw new ServiceUnavailableError('The job service is not available in this version.')
    },
  )

  app.get(
    '/jobs/:job_id',
    {
      config: { errorShape: 'wrapped' },
      schema: {
        summary: 'Read a job',
        params: JobIdParams,
        response: {
          200: described(JobStatusResponse, 'The job, in whatever state it is.'),
          404: wrappedError('JOB_NOT_FOUND: the job does not exist or has expired.'),
          422: validationFailed,
          503: wrappedError('SERVICE_UNAVAILABLE: the job store is unavailable.'),
        },
      },
    },
    async () => {
      throw new ServiceUnavailableError('The job service is not available in this version.')
    },
  )
}

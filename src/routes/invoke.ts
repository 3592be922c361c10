// POST /invoke: one synchronous algorithm call (PrimeChecker), answered in the same response.

import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Algorithm } from '../algorithms/algorithm.js'
import { INVOKE_ALGORITHM, type Registry } from '../algorithms/registry.js'
import type { Executor } from '../execution/executor.js'
import type { TimedRun } from '../execution/timed-run.js'
import {
  described,
  ErrorResponse,
  HTTPValidationError,
  InvokeRequest,
  InvokeResponse,
} from '../http/schemas.js'

export interface InvokeRouteOptions {
  algorithms: Registry
  executor: Executor
  maxDigits: number
  factorBudgetMs: number
  /** ALGOSERVE_INVOKE_TIMEOUT_MS: the most any synchronous run may take. */
  timeoutMs: number
}

const errorResponse = (description: string) => described(ErrorResponse, description)

export async function invokeRoutes(app: FastifyInstance, options: InvokeRouteOptions): Promise<void> {
  const { executor, maxDigits, factorBudgetMs } = options
  const algorithm = options.algorithms.get(INVOKE_ALGORITHM)
  if (algorithm?.inline === undefined) throw new Error(`${INVOKE_ALGORITHM} is not registered`)
  const { inline } = algorithm
  const timeoutMs = syncTimeLimit(algorithm, options.timeoutMs)
  const answer = (requestId: string, run: TimedRun) => ({
    request_id: requestId,
    status: 'success',
    result: run.result,
    metadata: { algorithm: algorithm.name, version: algorithm.version, elapsed_time: run.elapsedSeconds },
  })

  app.post(
    '/invoke',
    {
      config: { kind: 'api', errorShape: 'flat' },
      schema: {
        summary: 'Synchronous algorithm call (PrimeChecker)',
        operationId: 'invoke',
        tags: ['algorithms'],
        description:
          `Tests one integer for primality and factors it. The factorisation stops after ${factorBudgetMs} ms ` +
          '(ALGOSERVE_INVOKE_FACTOR_BUDGET_MS) with factorization_complete false; is_prime is always decided.',
        body: Type.Ref(InvokeRequest),
        response: {
          200: described(InvokeResponse, 'The result, with metadata.'),
          400: errorResponse('VALIDATION_ERROR: too many digits; details names the field and its value.'),
          413: errorResponse('PAYLOAD_TOO_LARGE: the body is larger than ALGOSERVE_MAX_BODY_BYTES.'),
          422: described(HTTPValidationError, 'The body failed the schema.'),
          500: errorResponse('ALGORITHM_ERROR or INTERNAL_ERROR.'),
          503: errorResponse(
            'SERVICE_UNAVAILABLE: no worker thread was free within ALGOSERVE_INVOKE_QUEUE_TIMEOUT_MS, or too ' +
              'many request bodies are in transit; the Retry-After header says when to try again.',
          ),
        },
      },
    },
    (request, reply) => {
      const params = inline.parseParams(request.body as Record<string, unknown>, { maxDigits }, '')
      // A cheap call's answer is returned as it is, and sent at once; the rest go to a thread or process.
      const run = executor.runInline(algorithm, params, factorBudgetMs, { timeoutMs })
      if (run !== undefined) return answer(request.id, run)
      // Only work sent elsewhere is worth cancelling; cheap runs finish before a disconnect is seen.
      return executor
        .runElsewhere(algorithm, params, factorBudgetMs, { signal: abortOnDisconnect(reply), timeoutMs })
        .then((run) => answer(request.id, run))
    },
  )
}

/** The time limit of a synchronous run: the algorithm's own, never past ALGOSERVE_INVOKE_TIMEOUT_MS. */
export const syncTimeLimit = (algorithm: Algorithm, invokeTimeoutMs: number): number =>
  Math.min(algorithm.timeoutMs ?? invokeTimeoutMs, invokeTimeoutMs)

/** Aborts when the client goes away before its answer is written, so nobody computes for no one. */
export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'))
  })
  return controller.signal
}

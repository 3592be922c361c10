// POST /invoke: one synchronous call of the interface's algorithm (the registry's invokeAlgorithm),
// answered in the same response.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { INVOKE_ALGORITHM, invokeAlgorithm, type Registry } from '../algorithms/registry.js'
import type { BoundSettings } from '../algorithms/request-bounds.js'
import { AlgorithmNotFoundError } from '../errors.js'
import type { Executor } from '../execution/executor.js'
import { runMetadata } from '../execution/timed-run.js'
import { requestExamples, successExample } from '../http/algorithm-examples.js'
import { algorithmBounds, bodyBounds } from '../http/body-bounds.js'
import { flat, problem, tooLarge } from '../http/examples.js'
import { addBodyParsers, losslessObject } from '../http/json-body.js'
import {
  described,
  ErrorResponse,
  HTTPValidationError,
  InvokeRequest,
  invokeResponse,
} from '../http/schemas.js'
import { answerCall, syncTimeLimit } from '../http/sync-call.js'
import { versionHeaders } from '../http/version-headers.js'

export interface InvokeRouteOptions {
  algorithms: Registry
  executor: Executor
  /** The settings of the request bounds: the invoked algorithm's own are in effect. */
  bounds: BoundSettings
  factorBudgetMs: number
  /** ALGOSERVE_INVOKE_TIMEOUT_MS: the most any synchronous run may take. */
  timeoutMs: number
}

const errorResponse = (description: string) => described(ErrorResponse, description)

export const invokeRoutes: FastifyPluginAsyncTypebox<InvokeRouteOptions> = async (app, options) => {
  const { executor, factorBudgetMs } = options
  const algorithm = invokeAlgorithm(options.algorithms)
  if (algorithm === undefined) return notServed(app, options.algorithms)
  const { inline } = algorithm
  if (inline === undefined) throw new Error(`${INVOKE_ALGORITHM} has no inline runs`)
  const timeoutMs = syncTimeLimit(algorithm, options.timeoutMs)
  // This plugin is a context of its own: its bodies are parsed under its algorithm's bounds.
  const { bounds, owner, paramLimits } = algorithmBounds(algorithm, options.bounds)
  addBodyParsers(app, bodyBounds(bounds, owner))

  app.post(
    '/invoke',
    {
      bodyLimit: bounds.maxBodyBytes,
      config: { kind: 'api', errorShape: 'flat', boundOwner: owner },
      schema: {
        summary: `Synchronous algorithm call (${algorithm.name})`,
        operationId: 'invoke',
        tags: ['algorithms'],
        description:
          `Tests one integer for primality and factors it. The factorisation stops after ${factorBudgetMs} ms ` +
          '(ALGOSERVE_INVOKE_FACTOR_BUDGET_MS) with factorization_complete false; is_prime is always decided.',
        body: losslessObject(Type.Ref(InvokeRequest)),
        response: {
          200: described(invokeResponse(algorithm), 'The result, with metadata.'),
          400: errorResponse('VALIDATION_ERROR: too many digits; details names the field and its value.'),
          413: errorResponse(
            `PAYLOAD_TOO_LARGE: the body is larger than ${bounds.maxBodyBytes} bytes (${algorithm.name}'s maxBodyBytes, else ALGOSERVE_MAX_BODY_BYTES).`,
          ),
          422: described(HTTPValidationError, 'The body failed the schema.'),
          500: errorResponse('ALGORITHM_ERROR or INTERNAL_ERROR.'),
          503: errorResponse(
            'SERVICE_UNAVAILABLE: no worker thread was free within ALGOSERVE_INVOKE_QUEUE_TIMEOUT_MS, or too ' +
              'many request bodies are in transit; the Retry-After header says when to try again.',
          ),
        },
        'x-examples': () => ({
          requestExamples: requestExamples(algorithm, (params) => params),
          responses: {
            200: successExample(algorithm),
            400: flat('VALIDATION_ERROR', 'number has 5000 digits; at most 4300 are allowed.', {
              field: 'number',
              value: '1234567890…(5000 digits)',
            }),
            413: flat(...tooLarge(options.bounds.maxBodyBytes)),
            422: problem(
              'int_from_float',
              ['body', 'number'],
              'Input should be a valid integer, got a number with a fractional part',
              1.5,
            ),
            500: flat('INTERNAL_ERROR', 'Internal server error.'),
            503: flat('SERVICE_UNAVAILABLE', 'Every worker thread is busy; try again later.'),
          },
        }),
      },
    },
    (request, reply) => {
      const params = inline.parseParams(request.body, paramLimits, '')
      versionHeaders(reply, algorithm)
      return answerCall(
        executor,
        { algorithm, params, budgetMs: factorBudgetMs, timeoutMs },
        reply,
        (run) => ({
          request_id: request.id,
          status: 'success',
          result: run.result,
          metadata: runMetadata(algorithm, run),
        }),
      )
    },
  )
}

/**
 * Without its algorithm (ALGOSERVE_PRIME_CHECKER=false), POST /invoke answers as a call to any algorithm
 * not served: 404 ALGORITHM_NOT_FOUND, flat as /invoke's errors are, whatever the body. It is left out
 * of the document.
 */
function notServed(app: FastifyInstance, algorithms: Registry): void {
  const available = algorithms.names()
  app.post('/invoke', { config: { kind: 'api', errorShape: 'flat' }, schema: { hide: true } }, () => {
    throw new AlgorithmNotFoundError(INVOKE_ALGORITHM, available)
  })
}

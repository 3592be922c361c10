// The one place where errors become the contract's bodies (docs/api.md): in the shape the route
// declares (route-declaration.ts), flat on /invoke and wrapped under `detail` on the job routes;
// FastAPI's shapes for 422, 404 and 405. Internal causes are logged with the request id and never sent.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { stringify } from 'lossless-json'
import { howToRaise } from '../algorithms/request-bounds.js'
import {
  ContractError,
  InputRuleError,
  InternalError,
  PayloadTooLargeError,
  SchemaValidationError,
  ServiceUnavailableError,
  StoreFullError,
  StoreUnavailableError,
  shortenValue,
  type ValidationDetail,
} from '../errors.js'
import type { ErrorShape } from './route-declaration.js'
import { RouteTable } from './route-table.js'
import { JobIdParams } from './schemas.js'

/**
 * A request answered in another shape than its route declares: POST /algorithms/{name}/invoke reaches a
 * route written at start, whose name a reload may have removed (an unknown name is wrapped), or the
 * parametric route, with a name a reload added (its calls are flat).
 */
const shapes = new WeakMap<FastifyRequest, ErrorShape>()
export const answerErrorsAs = (request: FastifyRequest, shape: ErrorShape): void => {
  shapes.set(request, shape)
}

/** Error bodies may echo client input, so they are written by the lossless serializer. */
const serializeJson = (payload: unknown): string => stringify(payload) ?? 'null'

/** Handles an error Fastify raised before routing; registerErrorHandlers makes it. */
export type FrameworkErrorHandler = (
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) => void

export function registerErrorHandlers(app: FastifyInstance, maxBodyBytes: number): FrameworkErrorHandler {
  const routes = new RouteTable(app)

  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    if (error instanceof SchemaValidationError) {
      return sendJson(reply, 422, { detail: error.problems })
    }
    const known = toServiceError(error, request, maxBodyBytes)
    if (reply.raw.destroyed) request.log.info('the client went away before its answer')
    else if (known.statusCode === 500) request.log.error({ err: error }, 'request failed')
    // A store's own failure (a Redis command timed out, SQLite is locked) is told with its cause; a
    // store known to be away is told once by the backend, not at every request.
    else if (error instanceof StoreUnavailableError && error.cause !== undefined)
      request.log.warn({ err: error }, 'the job store failed')
    else request.log.info({ err: { code: known.code, message: known.message } }, 'request rejected')
    if (known instanceof ServiceUnavailableError) reply.header('retry-after', String(known.retryAfterSeconds))
    if ('headers' in known) reply.headers(known.headers as Record<string, string>)
    const body = {
      error: known.code,
      message: known.message,
      details: known.details,
      request_id: request.id,
    }
    const wrapped = (shapes.get(request) ?? request.routeOptions.config?.errorShape) === 'wrapped'
    return sendJson(reply, known.statusCode, wrapped ? { detail: body } : body)
  })

  app.setNotFoundHandler((request, reply) => {
    const allowed = routes.allowedMethods(request.url)
    if (allowed.length > 0) {
      return sendJson(reply.header('allow', allowed.join(', ')), 405, { detail: 'Method Not Allowed' })
    }
    return sendJson(reply, 404, { detail: 'Not Found' })
  })
  return (error, request, reply) => frameworkError(routes, error, request, reply)
}

function sendJson(reply: FastifyReply, statusCode: number, body: unknown): FastifyReply {
  return reply.code(statusCode).type('application/json; charset=utf-8').serializer(serializeJson).send(body)
}

/** Any error as one of the service's: framework client errors keep their meaning, the rest are internal. */
function toServiceError(
  error: FastifyError | Error,
  request: FastifyRequest,
  maxBodyBytes: number,
): ContractError {
  if (error instanceof ContractError) return error
  // The job store's troubles, on whichever route met them.
  if (error instanceof StoreFullError)
    return new ServiceUnavailableError('Too many jobs are waiting; try again later.')
  if (error instanceof StoreUnavailableError) {
    return new ServiceUnavailableError('The job store is unavailable; try again later.')
  }
  const { code, statusCode } = error as FastifyError
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    // A route for an algorithm has its bound (body-bounds.ts), named with how to raise it.
    const { bodyLimit, config } = request.routeOptions
    const owner = config?.boundOwner
    return owner === undefined
      ? new PayloadTooLargeError(maxBodyBytes)
      : new PayloadTooLargeError(bodyLimit, howToRaise('maxBodyBytes', owner))
  }
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    // Fastify's own client errors (bad Content-Length, malformed media type, bad URL): their messages
    // describe the request, not our internals.
    return new InputRuleError(error.message, 'request', null)
  }
  return new InternalError(error)
}

/** The patterns of path parameters, for the ones Fastify could not even decode. */
const PATH_PATTERNS: Record<string, string> = { job_id: JobIdParams.properties.job_id.pattern as string }

/**
 * Errors Fastify raises before routing (a path it cannot percent-decode), answered as the route would
 * have: a 422 on the parameter for the route's method, a 405 for another, a 404 elsewhere.
 */
function frameworkError(
  routes: RouteTable,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  request.log.info({ err: { code: error.code, message: error.message } }, 'request rejected')
  // These replies skip the request hooks, which set the header on every other one.
  reply.header('x-request-id', request.id)
  const allowed = routes.allowedMethods(request.url)
  if (allowed.length === 0) {
    sendJson(reply, 404, { detail: 'Not Found' })
  } else if (!allowed.includes(request.method)) {
    sendJson(reply.header('allow', allowed.join(', ')), 405, { detail: 'Method Not Allowed' })
  } else {
    const parameters = Object.entries(routes.parametersOf(request.url, request.method))
    if (parameters.length === 0) {
      sendJson(reply, 400, {
        error: 'VALIDATION_ERROR',
        message: 'The request URL is malformed.',
        details: { field: 'url', value: shortenValue(request.url) },
        request_id: request.id,
      })
      return
    }
    const problems: ValidationDetail[] = parameters.map(([name, raw]) => {
      const pattern = PATH_PATTERNS[name]
      return {
        type: 'string_pattern_mismatch',
        loc: ['path', name],
        msg: `String should match pattern '${pattern}'`,
        input: shortenValue(raw),
        ctx: { pattern },
      }
    })
    sendJson(reply, 422, { detail: problems })
  }
}

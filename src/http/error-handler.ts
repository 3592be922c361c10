// The one place where errors become the contract's bodies (decisions.md, Errors): flat on /invoke,
// wrapped under `detail` on the job endpoints, FastAPI's shapes for 422, 404 and 405. Internal causes
// are logged with the request id and never sent.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { stringify } from 'lossless-json'
import {
  ContractError,
  InternalError,
  PayloadTooLargeError,
  RequestValidationError,
  ServiceUnavailableError,
  ValidationError,
} from '../errors.js'
import { RouteTable } from './route-table.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How this route's errors are shaped: flat (`/invoke`) or wrapped under `detail` (`/jobs`). */
    errorShape?: 'flat' | 'wrapped'
  }
}

/** Error bodies may echo client input, so they are written by the lossless serializer. */
const serializeJson = (payload: unknown): string => stringify(payload) ?? 'null'

export function registerErrorHandlers(app: FastifyInstance, maxBodyBytes: number): void {
  const routes = new RouteTable(app)

  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    if (error instanceof RequestValidationError) {
      return sendJson(reply, 422, { detail: error.problems })
    }
    const known = toServiceError(error, maxBodyBytes)
    if (reply.raw.destroyed) request.log.info('the client went away before its answer')
    else if (known.statusCode === 500) request.log.error({ err: error }, 'request failed')
    else request.log.info({ err: { code: known.code, message: known.message } }, 'request rejected')
    if (known instanceof ServiceUnavailableError) reply.header('retry-after', String(known.retryAfterSeconds))
    if ('headers' in known) reply.headers(known.headers as Record<string, string>)
    const body = {
      error: known.code,
      message: known.message,
      details: known.details,
      request_id: request.id,
    }
    const wrapped = request.routeOptions.config?.errorShape === 'wrapped'
    return sendJson(reply, known.statusCode, wrapped ? { detail: body } : body)
  })

  app.setNotFoundHandler((request, reply) => {
    const allowed = routes.allowedMethods(request.url)
    if (allowed.length > 0) {
      return sendJson(reply.header('allow', allowed.join(', ')), 405, { detail: 'Method Not Allowed' })
    }
    return sendJson(reply, 404, { detail: 'Not Found' })
  })
}

function sendJson(reply: FastifyReply, statusCode: number, body: unknown): FastifyReply {
  return reply.code(statusCode).type('application/json; charset=utf-8').serializer(serializeJson).send(body)
}

/** Any error as one of the service's: framework client errors keep their meaning, the rest are internal. */
function toServiceError(error: FastifyError | Error, maxBodyBytes: number): ContractError {
  if (error instanceof ContractError) return error
  const { code, statusCode } = error as FastifyError
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PayloadTooLargeError(maxBodyBytes)
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    // Fastify's own client errors (bad Content-Length, malformed media type, bad URL): their messages
    // describe the request, not our internals.
    return new ValidationError(error.message, 'request', null)
  }
  return new InternalError(error)
}

/** Errors Fastify raises before routing (a malformed URL), answered in the same shapes. */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  request.log.info({ err: { code: error.code, message: error.message } }, 'request rejected')
  // These replies skip the request hooks, which set the header on every other one.
  sendJson(reply.header('x-request-id', request.id), 400, {
    error: 'VALIDATION_ERROR',
    message: error.message,
    details: { field: 'url', value: request.url },
    request_id: request.id,
  })
}

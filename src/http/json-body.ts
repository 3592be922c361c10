// Request bodies: JSON is parsed losslessly (a 30-digit integer literal keeps its digits), a request
// with no Content-Type is read as JSON, and any other Content-Type reaches the validator as NotJsonBody.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { RequestValidationError } from '../errors.js'
import { type JsonLimits, JsonRefusal, parseBoundedJson } from './bounded-json.js'
import { NotJsonBody } from './validation.js'

const JSON_MEDIA_TYPE = /^application\/(?:[a-z0-9.!#$&^_-]+\+)?json$/i
const MEDIA_TYPE = /^[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+$/
/** What a malformed Content-Type is replaced by: a type that is well formed and not JSON. */
export const MALFORMED_CONTENT_TYPE = 'application/x-malformed-content-type'

export function registerBodyParsers(app: FastifyInstance, limits: JsonLimits): void {
  // As FastAPI reads it: an empty Content-Type is none (JSON), a malformed one is not JSON. Fastify
  // would refuse the malformed one with a 415 before the body is read.
  app.addHook('onRequest', (request, _reply, done) => {
    const headers = request.raw.headers
    const contentType = headers['content-type']
    if (contentType !== undefined) {
      if (contentType.trim() === '') delete headers['content-type']
      else if (!MEDIA_TYPE.test(contentType.split(';', 1)[0]?.trim() ?? '')) {
        headers['content-type'] = MALFORMED_CONTENT_TYPE
      }
    }
    done()
  })
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    parseBody(body as string, limits, done)
  })
  app.addContentTypeParser('*', { parseAs: 'string' }, (request: FastifyRequest, body, done) => {
    if (isJsonRequest(request)) parseBody(body as string, limits, done)
    else done(null, new NotJsonBody(body as string))
  })
}

function isJsonRequest(request: FastifyRequest): boolean {
  const contentType = request.headers['content-type']
  if (contentType === undefined) return true
  return JSON_MEDIA_TYPE.test(contentType.split(';', 1)[0]?.trim() ?? '')
}

function parseBody(
  text: string,
  limits: JsonLimits,
  done: (error: Error | null, body?: unknown) => void,
): void {
  // An empty body is a missing one, as FastAPI reads it.
  if (text.trim() === '') {
    done(null, undefined)
    return
  }
  try {
    done(null, parseBoundedJson(text, limits))
  } catch (error) {
    done(jsonInvalid(error))
  }
}

function jsonInvalid(error: unknown): Error {
  if (!(error instanceof JsonRefusal)) return error as Error
  return new RequestValidationError([
    {
      type: 'json_invalid',
      loc: ['body', error.position],
      msg: 'JSON decode error',
      input: {},
      ctx: { error: error.message },
    },
  ])
}

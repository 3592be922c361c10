// Request bodies: JSON is parsed losslessly (a 30-digit integer literal keeps its digits), a request
// with no Content-Type is read as JSON, and any other Content-Type reaches the validator as NotJsonBody.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { parse } from 'lossless-json'
import { RequestValidationError } from '../errors.js'
import { NotJsonBody } from './validation.js'

const JSON_MEDIA_TYPE = /^application\/(?:[a-z0-9.!#$&^_-]+\+)?json$/i

export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    parseBody(body as string, done)
  })
  app.addContentTypeParser('*', { parseAs: 'string' }, (request: FastifyRequest, body, done) => {
    if (isJsonRequest(request)) parseBody(body as string, done)
    else done(null, new NotJsonBody(body as string))
  })
}

function isJsonRequest(request: FastifyRequest): boolean {
  const contentType = request.headers['content-type']
  if (contentType === undefined) return true
  return JSON_MEDIA_TYPE.test(contentType.split(';', 1)[0]?.trim() ?? '')
}

function parseBody(text: string, done: (error: Error | null, body?: unknown) => void): void {
  // An empty body is a missing one, as FastAPI reads it.
  if (text.trim() === '') {
    done(null, undefined)
    return
  }
  try {
    done(null, parse(text, null, { onDuplicateKey: ({ newValue }) => newValue }))
  } catch (error) {
    done(jsonInvalid(text, error))
  }
}

function jsonInvalid(text: string, error: unknown): RequestValidationError {
  // The parser's syntax messages describe the text; anything else (a stack overflow on deep nesting)
  // is the engine's own and is not repeated to the client.
  const reason = error instanceof SyntaxError ? error.message : 'nesting is too deep'
  const position = /position (\d+)/.exec(reason)
  return new RequestValidationError([
    {
      type: 'json_invalid',
      loc: ['body', position ? Number(position[1]) : text.length],
      msg: 'JSON decode error',
      input: {},
      ctx: { error: reason.replace(/\s*at position \d+$/, '') },
    },
  ])
}

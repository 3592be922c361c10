// Request bodies: JSON is parsed losslessly (a 30-digit integer literal keeps its digits), a request
// with no Content-Type is read as JSON, and any other Content-Type reaches the validator as NotJsonBody,
// which names it (its 422 says what was sent).
// A large body is decoded and parsed a slice at a time, the event loop running between slices, so that
// no request holds the loop for its whole body (other requests, /healthz among them, would wait meanwhile).
import { StringDecoder } from 'node:string_decoder'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { type TSchema, type TUnsafe, Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type BoundName, type BoundOwner, howToRaise } from '../algorithms/request-bounds.js'
import { SchemaValidationError } from '../errors.js'
import {
  type JsonLimits,
  JsonRefusal,
  type JsonStats,
  parseBoundedJson,
  parseBoundedJsonInSlices,
  TOO_DEEP,
  TOO_LONG_STRING,
  TOO_MANY_VALUES,
} from './bounded-json.js'
import { NotJsonBody } from './validation.js'

const JSON_MEDIA_TYPE = /^application\/(?:[a-z0-9.!#$&^_-]+\+)?json$/i
const MEDIA_TYPE = /^[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+$/
/** What a malformed Content-Type is replaced by: a type that is well formed and not JSON. */
export const MALFORMED_CONTENT_TYPE = 'application/x-malformed-content-type'
/** The malformed Content-Type as sent, kept on the request for the 422's message. */
const SENT_CONTENT_TYPE = Symbol('sent content type')
type WithSentType = { [SENT_CONTENT_TYPE]?: string }

/**
 * A route's object body schema, typed as these parsers leave the body: an object whose numbers are
 * LosslessNumber (their text, kept exactly past 2^53), not the numbers the schema's static type would say.
 * The schema itself is unchanged.
 */
export const losslessObject = (schema: TSchema): TUnsafe<Record<string, unknown>> =>
  Type.Unsafe<Record<string, unknown>>(schema)

/** The bounds a body is parsed under, and whom a refusal names (request-bounds.ts). */
export interface BodyBounds {
  limits: JsonLimits
  owner: BoundOwner
  /**
   * The parse's counts are kept on the request (bodyMeasure), for a check against a tighter bound once
   * the body says whose bounds apply (POST /jobs).
   */
  measured?: boolean
}

/** What a body held, kept when its bounds are `measured`. */
export interface BodyMeasure extends JsonStats {
  bytes: number
  /** The text, to be parsed again under the tighter bounds when it breaks them, for the refusal's offset. */
  text: string
}

const MEASURE = Symbol('body measure')
type Measured = { [MEASURE]?: BodyMeasure }

/** The counts of a request's JSON body, when its route's bounds are `measured` and it had one. */
export const bodyMeasure = (request: FastifyRequest): BodyMeasure | undefined =>
  (request as Measured)[MEASURE]

/** The Content-Type reading (once, at the root) and the parsers, under the service-wide bounds. */
export function registerBodyParsers(app: FastifyInstance, bounds: BodyBounds): void {
  // As FastAPI reads it: an empty Content-Type is none (JSON), a malformed one is not JSON. Fastify
  // would refuse the malformed one with a 415 before the body is read.
  // Clients send the same Content-Type request after request: the last one found well formed is not
  // parsed again.
  let lastWellFormed = 'application/json'
  app.addHook('onRequest', function readContentType(request, _reply, done) {
    const headers = request.raw.headers
    const contentType = headers['content-type']
    if (contentType !== undefined && contentType !== lastWellFormed) {
      if (contentType.trim() === '') delete headers['content-type']
      else if (MEDIA_TYPE.test(contentType.split(';', 1)[0]?.trim() ?? '')) lastWellFormed = contentType
      else {
        ;(request.raw as WithSentType)[SENT_CONTENT_TYPE] = contentType
        headers['content-type'] = MALFORMED_CONTENT_TYPE
      }
    }
    done()
  })
  addBodyParsers(app, bounds)
}

/**
 * The body parsers of a context: at the root, and in the context of each route with bounds of its own
 * (an algorithm's), so that the bounds are the parser's own and nothing is looked up per request.
 */
export function addBodyParsers(app: FastifyInstance, bounds: BodyBounds): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    readJson(body as Buffer, bounds, done, request)
  })
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request: FastifyRequest, body, done) => {
    if (isJsonRequest(request)) {
      readJson(body as Buffer, bounds, done, request)
      return
    }
    const malformed = (request.raw as WithSentType)[SENT_CONTENT_TYPE]
    const sent = { contentType: malformed ?? request.headers['content-type'] ?? '', malformed: !!malformed }
    if ((body as Buffer).length <= SLICE_BYTES) done(null, new NotJsonBody(body.toString('utf8'), sent))
    else
      decodeInSlices(body as Buffer).then(
        (text) => done(null, new NotJsonBody(text, sent)),
        (error: Error) => done(error),
      )
  })
}

type Done = (error: Error | null, body?: unknown) => void

/** Bodies up to this size are decoded and parsed at once; a slice of a larger one costs as much. */
const SLICE_BYTES = 64 * 1024

function readJson(body: Buffer, bounds: BodyBounds, done: Done, request: FastifyRequest): void {
  const measure: BodyMeasure | undefined = bounds.measured
    ? { bytes: body.length, values: 0, depth: 0, longestString: 0, text: '' }
    : undefined
  if (measure !== undefined) (request as Measured)[MEASURE] = measure
  if (body.length <= SLICE_BYTES) {
    parseBody(body.toString('utf8'), bounds, done, measure)
    return
  }
  decodeInSlices(body)
    .then((text) => {
      if (isBlank(text)) return undefined
      if (measure !== undefined) measure.text = text
      return parseBoundedJsonInSlices(text, bounds.limits, SLICE_BYTES, measure)
    })
    .then(
      (value) => done(null, value),
      (error: unknown) => done(jsonInvalid(error, bounds)),
    )
}

/** UTF-8 as `Buffer.toString` reads it (bad bytes become U+FFFD), a slice per turn of the loop. */
async function decodeInSlices(body: Buffer): Promise<string> {
  const decoder = new StringDecoder('utf8')
  const parts: string[] = []
  for (let at = 0; at < body.length; at += SLICE_BYTES) {
    parts.push(decoder.write(body.subarray(at, at + SLICE_BYTES)))
    await nextTurn()
  }
  parts.push(decoder.end())
  return parts.join('')
}

/** An empty body is a missing one, as FastAPI reads it. */
const isBlank = (text: string): boolean => text.trim() === ''

function isJsonRequest(request: FastifyRequest): boolean {
  const contentType = request.headers['content-type']
  if (contentType === undefined) return true
  return JSON_MEDIA_TYPE.test(contentType.split(';', 1)[0]?.trim() ?? '')
}

function parseBody(text: string, bounds: BodyBounds, done: Done, measure: BodyMeasure | undefined): void {
  if (isBlank(text)) {
    done(null, undefined)
    return
  }
  if (measure !== undefined) measure.text = text
  try {
    done(null, parseBoundedJson(text, bounds.limits, measure))
  } catch (error) {
    done(jsonInvalid(error, bounds))
  }
}

/** The bound each refusal of the parser breaks. */
const BOUND_BROKEN: Record<string, { name: BoundName; limit: keyof JsonLimits }> = {
  [TOO_MANY_VALUES]: { name: 'maxJsonValues', limit: 'maxValues' },
  [TOO_DEEP]: { name: 'maxJsonDepth', limit: 'maxDepth' },
  [TOO_LONG_STRING]: { name: 'maxStringLength', limit: 'maxStringLength' },
}

/** A parser's refusal as the 422 `json_invalid`; one past a bound names it, its value and how to raise it. */
export function jsonInvalid(error: unknown, bounds: BodyBounds): Error {
  if (!(error instanceof JsonRefusal)) return error as Error
  const bound = BOUND_BROKEN[error.message]
  return new SchemaValidationError([
    {
      type: 'json_invalid',
      loc: ['body', error.position],
      msg: 'JSON decode error',
      input: {},
      ctx:
        bound === undefined
          ? { error: error.message }
          : {
              error: error.message,
              bound: bound.name,
              limit: bounds.limits[bound.limit],
              how_to_raise: howToRaise(bound.name, bounds.owner),
            },
    },
  ])
}

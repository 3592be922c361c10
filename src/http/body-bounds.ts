// Request bounds per algorithm on the HTTP side (docs/algorithms.md, request bounds). A route for one
// algorithm (its invoke route, POST /invoke) is registered in a context whose body parsers hold its
// bounds, with its body limit; nothing is looked up per request. POST /jobs learns the
// algorithm from the body: it reads the body under the largest bounds any loaded algorithm has, with
// the parse's counts kept, and checks them against the named algorithm's bounds (checkJobBody).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Algorithm, ParamLimits, RequestBounds } from '../algorithms/algorithm.js'
import { REQUEST_BOUNDS } from '../algorithms/contract.js'
import { isBuiltIn } from '../algorithms/registry.js'
import { type BoundOwner, type BoundSettings, boundsOf, howToRaise } from '../algorithms/request-bounds.js'
import { PayloadTooLargeError } from '../errors.js'
import { parseBoundedJson, parseBoundedJsonInSlices } from './bounded-json.js'
import { addBodyParsers, type BodyBounds, bodyMeasure, jsonInvalid } from './json-body.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Whose request bounds the route's body is held to: named, with how to raise them, in a 413. */
    boundOwner?: BoundOwner
  }
}

/** An algorithm's bounds, whom their refusals name, and its params' digit limit with how to raise it. */
export function algorithmBounds(
  algorithm: Algorithm,
  settings: BoundSettings,
): { bounds: RequestBounds; owner: BoundOwner; paramLimits: ParamLimits } {
  const bounds = boundsOf(algorithm, settings)
  const owner: BoundOwner = { algorithm: algorithm.name, builtIn: isBuiltIn(algorithm), settings }
  return {
    bounds,
    owner,
    paramLimits: { maxDigits: bounds.maxDigits, howToRaise: howToRaise('maxDigits', owner) },
  }
}

/** An algorithm's bounds as a route that reads bodies under larger ones holds a body to them. */
export interface HeldBounds {
  bounds: RequestBounds
  owner: BoundOwner
  paramLimits: ParamLimits
  /** Below the bounds the body is read under in some way: the body is checked again (checkJobBody). */
  tighter: boolean
}

/**
 * Each algorithm's HeldBounds for a route that reads bodies under `read`, worked out at its first request
 * (a version a reload brings is a new Algorithm, worked out anew).
 */
export function heldBounds(
  read: RequestBounds,
  settings: BoundSettings,
): (algorithm: Algorithm) => HeldBounds {
  const known = new WeakMap<Algorithm, HeldBounds>()
  return (algorithm) => {
    let held = known.get(algorithm)
    if (held === undefined) {
      const { bounds, owner, paramLimits } = algorithmBounds(algorithm, settings)
      const tighter =
        bounds.maxBodyBytes < read.maxBodyBytes ||
        bounds.maxJsonValues < read.maxJsonValues ||
        bounds.maxJsonDepth < read.maxJsonDepth ||
        bounds.maxStringLength < read.maxStringLength
      held = { bounds, owner, paramLimits, tighter }
      known.set(algorithm, held)
    }
    return held
  }
}

/** The bounds that take a body any of `algorithms` takes (the versions of one name): the largest of each. */
export function unionBounds(algorithms: readonly Algorithm[], settings: BoundSettings): RequestBounds {
  const [first, ...others] = algorithms.map((algorithm) => boundsOf(algorithm, settings)) as [
    RequestBounds,
    ...RequestBounds[],
  ]
  const union = { ...first }
  for (const bounds of others)
    for (const member of REQUEST_BOUNDS) union[member] = Math.max(union[member], bounds[member])
  return union
}

/** The parsers' view of request bounds. */
export function bodyBounds(bounds: RequestBounds, owner: BoundOwner, measured = false): BodyBounds {
  const limits = {
    maxValues: bounds.maxJsonValues,
    maxDepth: bounds.maxJsonDepth,
    maxStringLength: bounds.maxStringLength,
  }
  return { limits, owner, measured }
}

/** Registers `routes` in a context of their own whose bodies are parsed under `bounds`. */
export async function withBodyBounds(
  app: FastifyInstance,
  bounds: BodyBounds,
  routes: (context: FastifyInstance) => void,
): Promise<void> {
  await app.register(async (context) => {
    addBodyParsers(context, bounds)
    routes(context)
  })
}

/** Texts at most this long are parsed again at once, longer ones a slice at a time (as json-body.ts). */
const SLICE_CHARS = 64 * 1024

/**
 * The body of a request read under larger bounds, held to the bounds of the algorithm it names: a 413
 * past its maxBodyBytes, a 422 json_invalid past its maxJsonValues, maxJsonDepth or maxStringLength at the
 * offset where the body passes it (found by parsing it again under those bounds, which stops there).
 */
export async function checkJobBody(
  request: FastifyRequest,
  bounds: RequestBounds,
  owner: BoundOwner,
): Promise<void> {
  const measure = bodyMeasure(request)
  if (measure === undefined) return
  if (measure.bytes > bounds.maxBodyBytes)
    throw new PayloadTooLargeError(bounds.maxBodyBytes, howToRaise('maxBodyBytes', owner))
  if (
    measure.values <= bounds.maxJsonValues &&
    measure.depth <= bounds.maxJsonDepth &&
    measure.longestString <= bounds.maxStringLength
  )
    return
  const own = bodyBounds(bounds, owner)
  try {
    if (measure.text.length <= SLICE_CHARS) parseBoundedJson(measure.text, own.limits)
    else await parseBoundedJsonInSlices(measure.text, own.limits, SLICE_CHARS)
  } catch (error) {
    throw jsonInvalid(error, own)
  }
}

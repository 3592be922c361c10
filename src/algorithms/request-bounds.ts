// The bounds on a request for an algorithm (docs/algorithms.md, request bounds): those it declares, each
// at most the operator's ceiling (a declaration above it stops the start), else the operator's default.
// The defaults are the settings the service always had; the ceilings, never below them, are what an
// algorithm may raise its own bounds to without raising anyone else's.
import type { Config } from '../config.js'
import { ConfigError } from '../errors.js'
import type { Algorithm, RequestBounds } from './algorithm.js'
import { REQUEST_BOUNDS } from './contract.js'

export type BoundName = keyof RequestBounds

/** The settings that set the request bounds. */
export type BoundSettings = Pick<
  Config,
  | 'maxBodyBytes'
  | 'maxJsonValues'
  | 'maxJsonDepth'
  | 'maxStringLength'
  | 'maxDigits'
  | 'maxBodyBytesCeiling'
  | 'maxJsonValuesCeiling'
  | 'maxJsonDepthCeiling'
  | 'maxStringLengthCeiling'
  | 'maxDigitsCeiling'
>

/** Each bound's default setting and ceiling setting, as the operator writes them. */
export const BOUND_SETTINGS: Record<BoundName, { setting: string; ceiling: string }> = {
  maxBodyBytes: { setting: 'ALGOSERVE_MAX_BODY_BYTES', ceiling: 'ALGOSERVE_MAX_BODY_BYTES_CEILING' },
  maxJsonValues: { setting: 'ALGOSERVE_MAX_JSON_VALUES', ceiling: 'ALGOSERVE_MAX_JSON_VALUES_CEILING' },
  maxJsonDepth: { setting: 'ALGOSERVE_MAX_JSON_DEPTH', ceiling: 'ALGOSERVE_MAX_JSON_DEPTH_CEILING' },
  maxStringLength: {
    setting: 'ALGOSERVE_MAX_STRING_LENGTH',
    ceiling: 'ALGOSERVE_MAX_STRING_LENGTH_CEILING',
  },
  maxDigits: { setting: 'ALGOSERVE_MAX_DIGITS', ceiling: 'ALGOSERVE_MAX_DIGITS_CEILING' },
}

/** What a request for an algorithm that declares no bound may hold. */
export function defaultBounds(settings: BoundSettings): RequestBounds {
  return {
    maxBodyBytes: settings.maxBodyBytes,
    maxJsonValues: settings.maxJsonValues,
    maxJsonDepth: settings.maxJsonDepth,
    maxStringLength: settings.maxStringLength,
    maxDigits: settings.maxDigits,
  }
}

/** The most an algorithm may declare of each bound: its ceiling setting, never below its default. */
export function ceilingBounds(settings: BoundSettings): RequestBounds {
  return {
    maxBodyBytes: Math.max(settings.maxBodyBytesCeiling, settings.maxBodyBytes),
    maxJsonValues: Math.max(settings.maxJsonValuesCeiling, settings.maxJsonValues),
    maxJsonDepth: Math.max(settings.maxJsonDepthCeiling, settings.maxJsonDepth),
    maxStringLength: Math.max(settings.maxStringLengthCeiling, settings.maxStringLength),
    maxDigits: Math.max(settings.maxDigitsCeiling, settings.maxDigits),
  }
}

/** The bounds in effect for a request for `algorithm`. */
export function boundsOf(algorithm: Algorithm, settings: BoundSettings): RequestBounds {
  return { ...defaultBounds(settings), ...algorithm.requestBounds }
}

/**
 * Every algorithm's declared bounds against the ceilings; a ConfigError names the first one above its
 * ceiling, with both values. Refused rather than lowered: an algorithm held below what it declares
 * would refuse the inputs its author tested, at the first client's request rather than at the start.
 */
export function checkDeclaredBounds(algorithms: Iterable<Algorithm>, settings: BoundSettings): void {
  const ceilings = ceilingBounds(settings)
  for (const algorithm of algorithms) {
    for (const member of REQUEST_BOUNDS) {
      const declared = algorithm.requestBounds[member]
      if (declared !== undefined && declared > ceilings[member]) {
        const { ceiling } = BOUND_SETTINGS[member]
        throw new ConfigError(
          `Algorithm ${algorithm.source}: '${member}' is ${declared}, above the ceiling of ${ceilings[member]} ` +
            `that ${ceiling} sets; raise ${ceiling} or declare at most ${ceilings[member]}.`,
        )
      }
    }
  }
}

/** The bounds a body is read under before its algorithm's own are known: the digits are not among them. */
const READ_BOUNDS = ['maxBodyBytes', 'maxJsonValues', 'maxJsonDepth', 'maxStringLength'] as const

/**
 * A reload's algorithms against the bounds the running routes read bodies under (fixed at the start:
 * routes cannot be added or changed in a running app): a version whose bounds are larger than its name's
 * routes read would refuse, with a 413 or a 422, the bodies its author tested. A ConfigError names the first
 * such version, and says that a restart serves it.
 */
export function checkReadBounds(
  algorithms: Iterable<Algorithm>,
  readOf: (name: string) => RequestBounds,
  settings: BoundSettings,
): void {
  for (const algorithm of algorithms) {
    const bounds = boundsOf(algorithm, settings)
    const read = readOf(algorithm.name)
    for (const member of READ_BOUNDS) {
      if (bounds[member] > read[member]) {
        throw new ConfigError(
          `Algorithm ${algorithm.source} (${algorithm.name} ${algorithm.version}): '${member}' is ` +
            `${bounds[member]}, above the ${read[member]} that this service has read its bodies under since ` +
            'it started; restart the service to serve it.',
        )
      }
    }
  }
}

/** The bounds in effect for an algorithm as GET /algorithms/{name} shows them. */
export function shownBounds(algorithm: Algorithm, settings: BoundSettings) {
  const bounds = boundsOf(algorithm, settings)
  return {
    max_body_bytes: bounds.maxBodyBytes,
    max_json_values: bounds.maxJsonValues,
    max_json_depth: bounds.maxJsonDepth,
    max_string_length: bounds.maxStringLength,
    max_digits: bounds.maxDigits,
  }
}

/** Each bound's largest value over the algorithms (and the defaults): what a body is read under first. */
export function largestBounds(algorithms: Iterable<Algorithm>, settings: BoundSettings): RequestBounds {
  const largest = defaultBounds(settings)
  for (const algorithm of algorithms) {
    for (const member of REQUEST_BOUNDS)
      largest[member] = Math.max(largest[member], algorithm.requestBounds[member] ?? 0)
  }
  return largest
}

/** Whom a refusal names: the algorithm the bounds are of, or none (a body read before one is known). */
export interface BoundOwner {
  /** The algorithm's name; undefined for the service-wide defaults. */
  algorithm?: string
  /** A built-in algorithm's bounds are the settings': its contract is not the deployment's. */
  builtIn?: boolean
  settings: BoundSettings
}

/** How to raise a bound, in words for an error message. */
export function howToRaise(member: BoundName, owner: BoundOwner): string {
  const { setting, ceiling } = BOUND_SETTINGS[member]
  if (owner.builtIn) return `raise it with ${setting}`
  const most = ceilingBounds(owner.settings)[member]
  const contract =
    owner.algorithm === undefined ? "the algorithm's contract" : `${owner.algorithm}'s contract`
  return (
    `raise it with '${member}' in ${contract} (up to ${most}, the ceiling ${ceiling} sets), ` +
    `or with ${setting} for algorithms that declare none`
  )
}

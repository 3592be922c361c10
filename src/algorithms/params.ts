// An algorithm's params as a client sent them (parsed losslessly) made into what its `run` takes, and
// checked: numbers become JS numbers, except integers that a double cannot hold, which become BigInt
// (their digits counted first: past ALGOSERVE_MAX_DIGITS is 400, before any BigInt is made); then the
// params schema judges them, and its problems are the 422 body, FastAPI's shape, at `loc`.
import { isLosslessNumber } from 'lossless-json'
import { SchemaValidationError, shortenValue, type ValidationDetail } from '../errors.js'
import type { Algorithm, ParamLimits, SchemaCheckIssue } from './algorithm.js'
import { integerParam, readIntegerInput } from './integer-input.js'

/**
 * The params for `run`, checked; `loc` is where they sit in the request (['body'], or ['body', 'params']),
 * which also prefixes the field a 400 names.
 */
export function readParams(
  algorithm: Algorithm,
  raw: Record<string, unknown>,
  limits: ParamLimits,
  loc: readonly string[],
): unknown {
  const prefix = loc
    .slice(1)
    .map((part) => `${part}.`)
    .join('')
  const params =
    algorithm.inline === undefined
      ? plainValue(raw, limits, prefix.slice(0, -1))
      : algorithm.inline.parseParams(raw, limits, prefix)
  const issues = algorithm.checkParams(params)
  if (issues.length > 0) throw new SchemaValidationError(issues.map((issue) => problemOf(issue, loc, params)))
  return params
}

/** Params stored with a job (lossless JSON text, parsed) made into what `run` takes again, unchecked. */
export function storedParams(algorithm: Algorithm, raw: Record<string, unknown>, maxDigits: number): unknown {
  return algorithm.inline === undefined
    ? plainValue(raw, { maxDigits: Number.POSITIVE_INFINITY }, 'params')
    : algorithm.inline.parseParams(raw, { maxDigits }, 'params.')
}

/** A losslessly parsed value with its numbers made into numbers and BigInts; `field` names it in a 400. */
function plainValue(value: unknown, limits: ParamLimits, field: string): unknown {
  if (isLosslessNumber(value)) {
    const text = readIntegerInput(value)
    // Not an integer (a fraction, or past a double's exponent): a number as JSON.parse reads it.
    if (typeof text === 'string') return Number(value.value)
    const integer = integerParam(value, field, limits.maxDigits, limits.howToRaise)
    return integer >= Number.MIN_SAFE_INTEGER && integer <= Number.MAX_SAFE_INTEGER
      ? Number(integer)
      : integer
  }
  if (typeof value !== 'object' || value === null) return value
  const inner = (key: string | number) => (field === '' ? String(key) : `${field}.${key}`)
  if (Array.isArray(value)) return value.map((item, i) => plainValue(item, limits, inner(i)))
  const plain: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value)) {
    // Defined, not assigned: a member named __proto__ stays a member.
    Object.defineProperty(plain, key, {
      value: plainValue(member, limits, inner(key)),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return plain
}

const TYPE_PROBLEMS: Record<string, [string, string]> = {
  integer: ['int_type', 'Input should be a valid integer'],
  number: ['float_type', 'Input should be a valid number'],
  string: ['string_type', 'Input should be a valid string'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  object: ['dict_type', 'Input should be a valid dictionary'],
  array: ['list_type', 'Input should be a valid list'],
  null: ['none_required', 'Input should be None'],
}

/** A schema issue as a 422 entry: pydantic's type and message where one matches, Ajv's otherwise. */
function problemOf(issue: SchemaCheckIssue, loc: readonly string[], params: unknown): ValidationDetail {
  const at = [...loc, ...issue.path]
  const missing = issue.keyword === 'required'
  // pydantic echoes the object a member is missing from.
  const input = shortenValue(valueAt(params, missing ? issue.path.slice(0, -1) : issue.path))
  const { params: p } = issue
  switch (issue.keyword) {
    case 'required':
      return { type: 'missing', loc: at, msg: 'Field required', input }
    case 'additionalProperties':
      return { type: 'extra_forbidden', loc: at, msg: 'Extra inputs are not permitted', input }
    case 'type': {
      const [type, msg] = TYPE_PROBLEMS[String(p.type).split(',')[0] ?? ''] ?? ['type_error', issue.message]
      return { type, loc: at, msg, input }
    }
    case 'minimum':
      return bound('greater_than_equal', 'greater than or equal to', 'ge')
    case 'exclusiveMinimum':
      return bound('greater_than', 'greater than', 'gt')
    case 'maximum':
      return bound('less_than_equal', 'less than or equal to', 'le')
    case 'exclusiveMaximum':
      return bound('less_than', 'less than', 'lt')
    // pydantic's words for a value outside a set: the values allowed, in the message and in ctx.
    case 'enum':
      return allowed('enum', p.allowedValues as unknown[])
    case 'const':
      return allowed('literal_error', [p.allowedValue])
    case 'pattern':
      return {
        type: 'string_pattern_mismatch',
        loc: at,
        msg: `String should match pattern '${String(p.pattern)}'`,
        input,
        ctx: { pattern: p.pattern },
      }
    default:
      return { type: issue.keyword, loc: at, msg: `Input ${issue.message}`, input }
  }

  function allowed(type: string, values: unknown[]): ValidationDetail {
    const expected = inWords(values)
    return { type, loc: at, msg: `Input should be ${expected}`, input, ctx: { expected } }
  }

  function bound(type: string, words: string, key: string): ValidationDetail {
    return {
      type,
      loc: at,
      msg: `Input should be ${words} ${String(p.limit)}`,
      input,
      ctx: { [key]: p.limit },
    }
  }
}

/** The most allowed values a message lists. */
const SHOWN_VALUES = 16

/** Allowed values as pydantic words them: "'a', 'b' or 'c'"; past SHOWN_VALUES, how many more. */
function inWords(values: unknown[]): string {
  const shown = values
    .slice(0, SHOWN_VALUES)
    .map((value) =>
      typeof value === 'string' ? `'${shortenValue(value)}'` : JSON.stringify(shortenValue(value)),
    )
  if (values.length > SHOWN_VALUES)
    return `${shown.join(', ')} or one of ${values.length - SHOWN_VALUES} more`
  return shown.length < 2 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`
}

function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  let at = value
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined
    at = (at as Record<string | number, unknown>)[key]
  }
  return at
}

// Request validation against the TypeBox schemas, reporting problems the way FastAPI with pydantic v2
// does (docs/api.md, errors). It understands the subset of JSON Schema the request schemas use.
import type { TSchema } from '@sinclair/typebox'
import type { FastifySchemaCompiler } from 'fastify'
import { isLosslessNumber } from 'lossless-json'
import { readIntegerInput } from '../algorithms/integer-input.js'
import {
  PROBLEM_MESSAGES,
  type ProblemType,
  SchemaValidationError,
  shortenValue,
  type ValidationDetail,
} from '../errors.js'

/** A body that arrived with a Content-Type that is not JSON (or is malformed); the validator reports it. */
export class NotJsonBody {
  constructor(
    readonly text: string,
    readonly sent: { contentType: string; malformed: boolean },
  ) {}

  /** pydantic's message for a body that is no object, then what was sent instead of JSON. */
  get message(): string {
    const type = String(shortenValue(this.sent.contentType.split(';', 1)[0]?.trim() ?? ''))
    const what = this.sent.malformed
      ? `'${shortenValue(this.sent.contentType)}' is malformed`
      : `'${type}' is not JSON`
    return `${PROBLEM_MESSAGES.model_attributes_type}: Content-Type ${what}; send application/json`
  }
}

type Schema = TSchema & {
  $ref?: string
  anyOf?: Schema[]
  properties?: Record<string, Schema>
  required?: string[]
  pattern?: string
  enum?: unknown[]
  minimum?: number
  maximum?: number
  'x-integer-input'?: boolean
}

const LOCATIONS: Record<string, string> = {
  body: 'body',
  params: 'path',
  querystring: 'query',
  headers: 'header',
}

/** A Fastify validator compiler; `$ref`s are looked up among `schemas` by $id. */
export function validatorCompiler(schemas: readonly TSchema[]): FastifySchemaCompiler<TSchema> {
  const byId = new Map(schemas.map((s) => [s.$id as string, s as Schema]))
  const deref = (schema: Schema): Schema => {
    if (schema.$ref === undefined) return schema
    const target = byId.get(schema.$ref)
    if (target === undefined) throw new Error(`Unknown schema reference '${schema.$ref}'`)
    return target
  }

  return ({ schema, httpPart }) => {
    const location = LOCATIONS[httpPart ?? 'body'] ?? 'body'
    return (data: unknown) => {
      const problems: ValidationDetail[] = []
      if (data instanceof NotJsonBody) {
        problems.push({ ...problem('model_attributes_type', [location], data.text), msg: data.message })
      } else if (data === null || data === undefined) {
        problems.push(problem('missing', [location], null))
      } else {
        check(schema as Schema, data, [location], problems, deref)
      }
      return problems.length === 0 ? { value: data } : { error: new SchemaValidationError(problems) }
    }
  }
}

function check(
  given: Schema,
  value: unknown,
  loc: (string | number)[],
  problems: ValidationDetail[],
  deref: (s: Schema) => Schema,
): void {
  const schema = deref(given)
  if (schema['x-integer-input']) {
    const read = readIntegerInput(value)
    if (typeof read === 'string') problems.push(problem(read, loc, value))
    return
  }
  if (schema.anyOf !== undefined) {
    // The request schemas only use unions to make a field nullable.
    if (value === null && schema.anyOf.some((s) => s.type === 'null')) return
    const [inner] = schema.anyOf.filter((s) => s.type !== 'null')
    if (inner !== undefined) check(inner, value, loc, problems, deref)
    return
  }
  switch (schema.type) {
    case 'object': {
      // A number literal is an object here (the lossless parser keeps its text), but not a JSON one.
      if (typeof value !== 'object' || value === null || Array.isArray(value) || isLosslessNumber(value)) {
        // pydantic names a model "attributes" and a free-form mapping a "dictionary".
        const declared = Object.keys(schema.properties ?? {}).length > 0
        problems.push(problem(declared ? 'model_attributes_type' : 'dict_type', loc, value))
        return
      }
      const record = value as Record<string, unknown>
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        if (record[key] === undefined) {
          if (schema.required?.includes(key)) problems.push(problem('missing', [...loc, key], value))
        } else {
          check(property, record[key], [...loc, key], problems, deref)
        }
      }
      return
    }
    case 'string': {
      if (typeof value !== 'string') {
        problems.push(problem('string_type', loc, value))
      } else if (schema.enum !== undefined && !schema.enum.includes(value)) {
        const expected = schema.enum.map((v) => `'${String(v)}'`)
        const text = `${expected.slice(0, -1).join(', ')} or ${expected.at(-1)}`
        problems.push({
          ...problem('enum', loc, value),
          msg: `Input should be ${text}`,
          ctx: { expected: text },
        })
      } else if (schema.pattern !== undefined && !compiled(schema.pattern).test(value)) {
        problems.push({
          ...problem('string_pattern_mismatch', loc, value),
          msg: `String should match pattern '${schema.pattern}'`,
          ctx: { pattern: schema.pattern },
        })
      }
      return
    }
    // Numbers arrive as text in a query string; the route reads them with Number() once they pass.
    case 'integer':
    case 'number': {
      const integer = schema.type === 'integer'
      const text = typeof value === 'string' ? value.trim() : ''
      const read = typeof value === 'number' ? value : text === '' ? Number.NaN : Number(text)
      if (!Number.isFinite(read) || (integer && !Number.isInteger(read))) {
        problems.push(problem(integer ? 'int_parsing' : 'float_parsing', loc, value))
      } else if (schema.minimum !== undefined && read < schema.minimum) {
        problems.push({
          ...problem('greater_than_equal', loc, value),
          msg: `Input should be greater than or equal to ${schema.minimum}`,
          ctx: { ge: schema.minimum },
        })
      } else if (schema.maximum !== undefined && read > schema.maximum) {
        problems.push({
          ...problem('less_than_equal', loc, value),
          msg: `Input should be less than or equal to ${schema.maximum}`,
          ctx: { le: schema.maximum },
        })
      }
      return
    }
    default:
      throw new Error(`validation.ts does not support schema type '${String(schema.type)}'`)
  }
}

const patterns = new Map<string, RegExp>()

function compiled(pattern: string): RegExp {
  let regExp = patterns.get(pattern)
  if (regExp === undefined) {
    regExp = new RegExp(pattern, 'u')
    patterns.set(pattern, regExp)
  }
  return regExp
}

function problem(type: ProblemType, loc: (string | number)[], input: unknown): ValidationDetail {
  const msg = type in PROBLEM_MESSAGES ? PROBLEM_MESSAGES[type as keyof typeof PROBLEM_MESSAGES] : type
  // pydantic echoes the whole input; here its size is bounded, whatever the client sent.
  return { type, loc, msg, input: shortenValue(input) }
}

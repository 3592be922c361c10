// Modules' JSON Schemas compiled with Ajv (an unknown keyword or a typo is a start error, not a check
// silently skipped). Ajv's `integer` does not take a BigInt, so values are checked through a view
// in which each BigInt is the nearest double: its type and its bounds are judged as a number's, and the
// value that reaches `run` keeps the BigInt.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { JsonSchema, SchemaCheckIssue } from './algorithm.js'

// ajv-formats is CommonJS: its function is the default export's own default.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default

let shared: Ajv | undefined

function ajv(): Ajv {
  if (shared === undefined) {
    shared = new Ajv({
      allErrors: true,
      strictSchema: true,
      strictNumbers: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      discriminator: true,
    })
    // JSON Schema's formats and OpenAPI's number formats (int32, int64, float, double).
    addFormats(shared)
  }
  return shared
}

export type SchemaCheck = (value: unknown) => SchemaCheckIssue[]

/** Compiles a schema; throws Ajv's own message when it does not compile. */
export function compileSchema(schema: JsonSchema): SchemaCheck {
  const shared = ajv()
  let validate: ValidateFunction
  try {
    validate = shared.compile(schema)
  } finally {
    // Known while it compiles, so that its references to itself resolve ('#', its own $id, as TypeBox's
    // Type.Recursive writes); forgotten after, so that two modules may give their schemas the same $id.
    shared.removeSchema(schema)
  }
  return (value) => (validate(numberView(value)) ? [] : (validate.errors ?? []).map(issueOf))
}

/**
 * The value with every BigInt replaced by the nearest double, or the largest one past its range (a
 * copy only where one occurs).
 */
function numberView(value: unknown): unknown {
  if (typeof value === 'bigint') return Math.max(-Number.MAX_VALUE, Math.min(Number.MAX_VALUE, Number(value)))
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const item = numberView(value[i])
      if (item !== value[i]) {
        copy ??= value.slice()
        copy[i] = item
      }
    }
    return copy ?? value
  }
  let copy: Record<string, unknown> | undefined
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key]
    const item = numberView(member)
    if (item !== member) {
      copy ??= { ...(value as Record<string, unknown>) }
      copy[key] = item
    }
  }
  return copy ?? value
}

function issueOf(error: ErrorObject): SchemaCheckIssue {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((part) => (/^(0|[1-9][0-9]*)$/.test(part) ? Number(part) : part))
  const params = error.params as Record<string, unknown>
  // A missing or unexpected member is the member's problem: the path names it.
  if (error.keyword === 'required') path.push(String(params.missingProperty))
  if (error.keyword === 'additionalProperties') path.push(String(params.additionalProperty))
  return { path, keyword: error.keyword, message: error.message ?? error.keyword, params }
}

/** Issues as one line, for errors and logs: "n: must be integer; m: must have required property". */
export function describeIssues(issues: SchemaCheckIssue[]): string {
  return issues
    .map((issue) => `${issue.path.length === 0 ? '(the value)' : issue.path.join('.')}: ${issue.message}`)
    .join('; ')
}

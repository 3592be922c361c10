// The contract of an algorithm (docs/algorithms.md): a value checked member by member, its schemas
// compiled (with the components its references name), and, once it passes, the Algorithm the registry
// and the executor use. Anything wrong is a ConfigError naming the source and the problem.
import { ConfigError } from '../errors.js'
import { type Algorithm, type BuiltInModule, INLINE, type JsonSchema } from './algorithm.js'
import { compileSchema, describeIssues, type SchemaCheck } from './schema-check.js'
import { schemaComponents } from './schema-components.js'

const NAME = /^[A-Za-z0-9_-]{1,64}$/
// Semantic Versioning 2.0.0: major.minor.patch, an optional pre-release and build.
const SEMVER =
  /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/
/** The request bounds an algorithm may declare, each a whole number of at least 1. */
export const REQUEST_BOUNDS = [
  'maxBodyBytes',
  'maxJsonValues',
  'maxJsonDepth',
  'maxStringLength',
  'maxDigits',
] as const
const MEMBERS = [
  'name',
  'version',
  'description',
  'params',
  'result',
  'examples',
  'timeoutMs',
  'concurrency',
  'memoryMb',
  'maxResultBytes',
  'maxProgressBytes',
  ...REQUEST_BOUNDS,
  'run',
]
export interface CheckOptions {
  /**
   * The process has checked the same module at its start (this is a worker thread): its schemas compile
   * at their first use, and what only the process uses (the docs' components, the examples) is not
   * checked again. A thread's start is on the path to the service's readiness.
   */
  checkedByProcess?: boolean
}

/** The module checked against the contract, with its schemas compiled; a ConfigError names what is wrong. */
export function checkModule(value: unknown, source: string, options: CheckOptions = {}): Algorithm {
  const fail = (problem: string): never => {
    throw new ConfigError(`Algorithm module ${source}: ${problem}.`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail('its default export must be an object (export default { name, version, ... })')
  const module = value as BuiltInModule
  const unknown = Object.keys(module).filter((key) => !MEMBERS.includes(key))
  if (unknown.length > 0) fail(`unknown member ${unknown.map((key) => `'${key}'`).join(', ')}`)
  if (typeof module.name !== 'string' || !NAME.test(module.name))
    fail("'name' must be 1 to 64 letters, digits, '_' or '-'")
  if (typeof module.version !== 'string' || !SEMVER.test(module.version))
    fail("'version' must be a semantic version such as 1.0.0")
  if (typeof module.description !== 'string') fail("'description' must be a string")
  if (typeof module.run !== 'function') fail("'run' must be a function")
  if (!isObject(module.params)) fail("'params' must be a JSON Schema of an object ({ type: 'object', ... })")
  if (!isObject(module.result)) fail("'result' must be a JSON Schema")
  if (
    module.timeoutMs !== undefined &&
    (typeof module.timeoutMs !== 'number' || !Number.isInteger(module.timeoutMs) || module.timeoutMs < 1)
  )
    fail("'timeoutMs' must be a whole number of ms, at least 1")
  if (
    module.concurrency !== undefined &&
    (typeof module.concurrency !== 'number' ||
      !Number.isInteger(module.concurrency) ||
      module.concurrency < 1)
  )
    fail("'concurrency' must be a whole number of jobs running at once, at least 1")
  wholeAtLeast(module.memoryMb, 16, "'memoryMb' must be a whole number of MB, at least 16", fail)
  wholeAtLeast(module.maxResultBytes, 1, "'maxResultBytes' must be a whole number of bytes, at least 1", fail)
  wholeAtLeast(
    module.maxProgressBytes,
    1,
    "'maxProgressBytes' must be a whole number of bytes, at least 1",
    fail,
  )
  for (const member of REQUEST_BOUNDS)
    wholeAtLeast(module[member], 1, `'${member}' must be a whole number, at least 1`, fail)
  const compile = (member: 'params' | 'result') => {
    try {
      return compileSchema(module[member])
    } catch (error) {
      return fail(`its '${member}' schema does not compile: ${(error as Error).message}`)
    }
  }
  const lazily = (member: 'params' | 'result'): SchemaCheck => {
    let check: SchemaCheck | undefined
    return (value) => {
      check ??= compile(member)
      return check(value)
    }
  }
  if (options.checkedByProcess) return algorithmOf(module, source, lazily('params'), lazily('result'))
  const checkParams = compile('params')
  const checkResult = compile('result')
  const components = (member: 'params' | 'result') => {
    try {
      return schemaComponents(module[member], member)
    } catch (error) {
      return fail(`its '${member}' schema cannot be shown in the API docs: ${(error as Error).message}`)
    }
  }
  components('result')
  // Its root may be a reference (TypeBox's Type.Module writes { $defs, $ref }): the schema it names counts.
  if (rootOf(components('params'), 'params').type !== 'object')
    fail("'params' must be a JSON Schema of an object ({ type: 'object', ... })")
  if (module.examples !== undefined) {
    if (!Array.isArray(module.examples)) fail("'examples' must be an array of { params }")
    module.examples.forEach((example, i) => {
      if (!isObject(example) || !isObject(example.params)) fail(`examples[${i}] must be { params: { ... } }`)
      const issues = checkParams(example.params)
      if (issues.length > 0) fail(`examples[${i}].params fail the params schema: ${describeIssues(issues)}`)
    })
  }
  return algorithmOf(module, source, checkParams, checkResult)
}

function algorithmOf(
  module: BuiltInModule,
  source: string,
  checkParams: SchemaCheck,
  checkResult: SchemaCheck,
): Algorithm {
  return {
    name: module.name,
    version: module.version,
    description: module.description,
    module,
    source,
    timeoutMs: module.timeoutMs ?? null,
    concurrency: module.concurrency ?? null,
    memoryMb: module.memoryMb ?? null,
    maxResultBytes: module.maxResultBytes ?? null,
    maxProgressBytes: module.maxProgressBytes ?? null,
    requestBounds: Object.fromEntries(
      REQUEST_BOUNDS.filter((member) => module[member] !== undefined).map((member) => [
        member,
        module[member],
      ]),
    ),
    inline: module[INLINE],
    checkParams,
    checkResult,
  }
}

/** The component a schema's root refers to, through references that are all it is. */
function rootOf(components: Record<string, JsonSchema>, name: string): JsonSchema {
  let root = components[name] ?? {}
  for (let seen = 0; typeof root.$ref === 'string' && seen < Object.keys(components).length; seen++)
    root = components[root.$ref] ?? {}
  return root
}

/** An optional member that must be a whole number of at least `least` when present. */
function wholeAtLeast(
  value: unknown,
  least: number,
  problem: string,
  fail: (problem: string) => never,
): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < least))
    fail(problem)
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

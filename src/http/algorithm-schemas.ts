// Each algorithm's params and result schemas as shared schemas, so that the routes $ref them and the
// OpenAPI document shows them as components. Their names are the algorithm's name (letters, digits, _
// and -) with a dot and a suffix: no two algorithms' can clash, whatever the modules call their types,
// and none is one of the interface's own names, which have no dot.
import type { Algorithm } from '../algorithms/algorithm.js'
import { type Registry, servedPrimeChecker } from '../algorithms/registry.js'
import { type BoundSettings, shownBounds } from '../algorithms/request-bounds.js'
import { schemaComponents } from '../algorithms/schema-components.js'

const SUFFIX = { params: 'Params', result: 'Result' } as const

export const algorithmSchemaId = (name: string, part: keyof typeof SUFFIX): string =>
  `${name}.${SUFFIX[part]}`

/**
 * The module's schema as components: its own under its component name, and each schema its references
 * name under that name and a dot (schema-components.ts). References name components.
 */
const componentsOf = (algorithm: Algorithm, part: keyof typeof SUFFIX): Record<string, Schema> =>
  schemaComponents(algorithm.module[part], algorithmSchemaId(algorithm.name, part))

/** Every algorithm's params and result components, with their component names as $id. */
export function algorithmSchemas(algorithms: Registry): Record<string, unknown>[] {
  return [...algorithms.values()].flatMap((algorithm) =>
    (['params', 'result'] as const).flatMap((part) =>
      Object.entries(componentsOf(algorithm, part)).map(([$id, schema]) => ({ ...schema, $id })),
    ),
  )
}

type Schema = Record<string, unknown>

/** How deep a sample follows references: a recursive schema that requires itself ends there. */
const SAMPLE_DEPTH = 16

/**
 * A value the schema accepts, for an example where the module gives none: its own `examples` or
 * `default` when it has them, else the simplest value of its type within its bounds. `components`
 * are what its references name.
 */
export function sampleOf(schema: Schema, components: Record<string, Schema> = {}, depth = 0): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if (schema.default !== undefined) return schema.default
  if (schema.const !== undefined) return schema.const
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (depth > SAMPLE_DEPTH) return null
  const sample = (inner: Schema) => sampleOf(inner, components, depth + 1)
  if (typeof schema.$ref === 'string') return sample(components[schema.$ref] ?? {})
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const [first] = (schema[key] as Schema[] | undefined) ?? []
    if (first !== undefined) return sample(first)
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>
      const required = (schema.required ?? []) as string[]
      return Object.fromEntries(required.map((name) => [name, sample(properties[name] ?? {})]))
    }
    case 'array':
      return Array.from({ length: Number(schema.minItems ?? 0) }, () =>
        sample((schema.items ?? {}) as Schema),
      )
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(0, Math.ceil(schema.minimum)) : 0
    case 'string':
      return 'x'.repeat(Number(schema.minLength ?? 0))
    case 'boolean':
      return false
    default:
      return null
  }
}

/** A sample of an algorithm's params or result, its references followed. */
function sampleComponent(algorithm: Algorithm, part: keyof typeof SUFFIX): unknown {
  const components = componentsOf(algorithm, part)
  return sampleOf(components[algorithmSchemaId(algorithm.name, part)] ?? {}, components)
}

export interface AlgorithmExampleParts {
  requestId: string
  flat: (error: string, message: string, details?: Record<string, unknown> | null) => unknown
  tooLarge: unknown
  /** The settings of the request bounds, for each algorithm's limits. */
  bounds: BoundSettings
}

export const invokeOperationId = (name: string): string => `invoke_${name}`

/**
 * PrimeChecker alone (the interface's own service): the document keeps the interface's single shapes
 * and single examples. Any other set of algorithms gets shapes and examples per algorithm.
 */
export const interfaceOnly = (algorithms: Registry): boolean =>
  algorithms.size === 1 && servedPrimeChecker(algorithms) !== undefined

/** The params of an algorithm's examples, or a sample when it gives none. */
const exampleParams = (algorithm: Algorithm): unknown[] => {
  const given = (algorithm.module.examples ?? []).map((example) => example.params)
  return given.length > 0 ? given : [sampleComponent(algorithm, 'params')]
}

/** The longest summary of a named example. */
const SUMMARY_CHARS = 100

/** Named examples, as a media type's `examples`: the algorithm's name, then -2, -3, ... */
function named(algorithm: Algorithm, value: (params: unknown) => unknown): Record<string, NamedExample> {
  return Object.fromEntries(
    exampleParams(algorithm).map((params, i) => {
      const text = `${algorithm.name}: ${JSON.stringify(params)}`
      const summary = text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text
      return [i === 0 ? algorithm.name : `${algorithm.name}-${i + 1}`, { summary, value: value(params) }]
    }),
  )
}

/** The first algorithm by name, as the job examples show it: its first example and a sample result. */
export function firstAlgorithmShown(algorithms: Registry) {
  const name = [...algorithms.keys()].sort()[0]
  const algorithm = name === undefined ? undefined : algorithms.get(name)
  if (algorithm === undefined) return undefined
  return {
    algorithm: algorithm.name,
    version: algorithm.version,
    params: exampleParams(algorithm)[0],
    result: sampleComponent(algorithm, 'result'),
  }
}

export interface NamedExample {
  summary: string
  value: unknown
}

/** Every algorithm's examples as POST /jobs bodies, by name; null for the interface's single example. */
export function jobRequestExamples(algorithms: Registry): Record<string, NamedExample> | null {
  if (interfaceOnly(algorithms)) return null
  return Object.assign(
    {},
    ...[...algorithms.keys()]
      .sort()
      .map((name) => named(algorithms.get(name) as Algorithm, (params) => ({ algorithm: name, params }))),
  )
}

/**
 * The examples of the algorithm operations, by operationId, in the shape openapi.ts takes: the list,
 * one algorithm (the first by name), and each algorithm's invoke operation.
 */
export function algorithmExamples(algorithms: Registry, shared: AlgorithmExampleParts) {
  const sorted = [...algorithms.keys()].sort().map((name) => algorithms.get(name) as Algorithm)
  const [first] = sorted
  if (first === undefined) return {}
  const summary = ({ name, version, description }: Algorithm) => ({ name, version, description })
  const lists = {
    listAlgorithms: {
      responses: { 200: { algorithms: sorted.map((algorithm) => ({ ...summary(algorithm), workers: 1 })) } },
    },
    getAlgorithm: {
      parameters: { name: first.name },
      responses: {
        200: {
          ...summary(first),
          params: first.module.params,
          result: first.module.result,
          examples: first.module.examples ?? [],
          timeout_ms: first.timeoutMs,
          limits: shownBounds(first, shared.bounds),
          workers: 1,
        },
        404: {
          detail: shared.flat('ALGORITHM_NOT_FOUND', "Algorithm 'Sorter' is not known.", {
            available_algorithms: sorted.map((algorithm) => algorithm.name),
          }),
        },
      },
    },
  }
  const invokes = sorted.map((algorithm) => [
    invokeOperationId(algorithm.name),
    {
      ...(interfaceOnly(algorithms)
        ? { request: exampleParams(algorithm)[0] }
        : { requestExamples: named(algorithm, (params) => params) }),
      responses: {
        200: {
          request_id: shared.requestId,
          status: 'success',
          result: sampleComponent(algorithm, 'result'),
          metadata: { algorithm: algorithm.name, version: algorithm.version, elapsed_time: 0.000012 },
        },
        400: shared.flat('VALIDATION_ERROR', 'n has 5000 digits; at most 4300 are allowed.', {
          field: 'n',
          value: '1234567890…(5000 digits)',
        }),
        413: shared.tooLarge,
        422: { detail: [{ type: 'missing', loc: ['body', 'n'], msg: 'Field required', input: {} }] },
        500: shared.flat(
          'ALGORITHM_ERROR',
          `The algorithm '${algorithm.name}' failed while running: n is too large`,
        ),
        503: shared.flat('SERVICE_UNAVAILABLE', 'Every worker thread is busy; try again later.'),
      },
    },
  ])
  return { ...lists, ...Object.fromEntries(invokes) }
}

/**
 * The POST /jobs body, a job (alone and in a list) and the webhook payload as a oneOf over the algorithms,
 * discriminated by `algorithm`, each with its own params and result schemas; with PrimeChecker alone the
 * document keeps its single shapes.
 */
export function discriminateJobs(schemas: Record<string, Schema>, algorithms: Registry): void {
  if (interfaceOnly(algorithms)) return
  const names = [...algorithms.keys()].sort()
  const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` })
  const variants = (base: string, build: (name: string, schema: Schema) => Schema) => {
    const original = schemas[base]
    if (original === undefined) return
    const mapping: Record<string, string> = {}
    for (const name of names) {
      const id = `${name}.${base}`
      schemas[id] = build(name, structuredClone(original))
      mapping[name] = `#/components/schemas/${id}`
    }
    schemas[base] = {
      description: original.description,
      oneOf: names.map((name) => ref(`${name}.${base}`)),
      discriminator: { propertyName: 'algorithm', mapping },
    }
  }
  const properties = (schema: Schema) => schema.properties as Record<string, Schema>
  variants('JobRequest', (name, schema) => {
    properties(schema).algorithm = { type: 'string', const: name }
    properties(schema).params = ref(algorithmSchemaId(name, 'params'))
    return schema
  })
  const byAlgorithm = (name: string, schema: Schema) => {
    properties(schema).algorithm = { type: 'string', const: name }
    properties(schema).result = { anyOf: [ref(algorithmSchemaId(name, 'result')), { type: 'null' }] }
    return schema
  }
  variants('JobStatusResponse', byAlgorithm)
  variants('JobListItem', byAlgorithm)
  variants('WebhookPayload', byAlgorithm)
}

/** Keywords whose value is a schema, a list of schemas, or a map of schemas. */
const SCHEMA_KEYWORDS = {
  one: [
    'items',
    'additionalProperties',
    'additionalItems',
    'contains',
    'propertyNames',
    'not',
    'if',
    'then',
    'else',
  ],
  list: ['allOf', 'anyOf', 'oneOf', 'prefixItems'],
  map: ['properties', 'patternProperties', 'dependentSchemas'],
}

/**
 * The params components with each member's `default` said in its description instead. Generated
 * clients read a `default` in a component as "always present" (openapi-typescript makes the member
 * required), which is true of an answer, not of params: the service fills in no default, `run` sees
 * only what was sent, and a member with a default is one a client may leave out. GET
 * /algorithms/{name} keeps the schemas as the module wrote them.
 */
export function describeParamDefaults(schemas: Record<string, Schema>, algorithms: Registry): void {
  for (const name of algorithms.keys()) {
    const id = algorithmSchemaId(name, 'params')
    for (const [key, schema] of Object.entries(schemas))
      if (key === id || key.startsWith(`${id}.`)) {
        // A copy: the schemas the routes were given stay as they are.
        schemas[key] = structuredClone(schema)
        describeDefaults(schemas[key])
      }
  }
}

function describeDefaults(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return
  const node = schema as Schema
  for (const key of SCHEMA_KEYWORDS.one) describeDefaults(node[key])
  for (const key of SCHEMA_KEYWORDS.list)
    if (Array.isArray(node[key])) for (const item of node[key]) describeDefaults(item)
  for (const key of SCHEMA_KEYWORDS.map) {
    const members = node[key]
    if (typeof members !== 'object' || members === null) continue
    for (const member of Object.values(members)) {
      describeDefaults(member)
      if (key === 'properties') moveDefault(member)
    }
  }
}

/** A member's `default` moved into its description: "Default: 100." */
function moveDefault(member: unknown): void {
  if (typeof member !== 'object' || member === null || !('default' in member)) return
  const { default: value, ...rest } = member as Schema
  const said = `Default: ${JSON.stringify(value)}.`
  const description =
    typeof rest.description === 'string' ? `${rest.description.replace(/\.?$/, '.')} ${said}` : said
  for (const key of Object.keys(member)) delete (member as Schema)[key]
  Object.assign(member, { ...rest, description })
}

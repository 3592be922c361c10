// Each algorithm's params and result schemas as shared schemas, so that the routes $ref them and the
// OpenAPI document shows them as components. Their names are the algorithm's name (letters, digits, _
// and -) with a dot and a suffix: no two algorithms' can clash, whatever the modules call their types,
// and none is one of the interface's own names, which have no dot.
import type { Algorithm } from '../algorithms/algorithm.js'
import type { Registry } from '../algorithms/registry.js'
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
      request: algorithm.module.examples?.[0]?.params ?? sampleComponent(algorithm, 'params'),
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
 * With more than one algorithm, the POST /jobs body, a job (alone and in a list) and the webhook payload are a oneOf over
 * the algorithms, discriminated by `algorithm`, each with its own params and result schemas. With one
 * (PrimeChecker alone) the document keeps its single shapes.
 */
export function discriminateJobs(schemas: Record<string, Schema>, algorithms: Registry): void {
  if (algorithms.size < 2) return
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

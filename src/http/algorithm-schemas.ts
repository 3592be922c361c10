// Each algorithm's params and result schemas as shared schemas, so that the routes $ref them and the
// OpenAPI document shows them as components; and the document's job shapes, one branch per algorithm.
// Their names are the algorithm's name (letters, digits, _ and -) with a dot and a suffix: no two
// algorithms' can clash, whatever the modules call their types, and none is one of the interface's own
// names, which have no dot.
import type { Algorithm } from '../algorithms/algorithm.js'
import type { Registry } from '../algorithms/registry.js'
import { SCHEMA_KEYWORDS, schemaComponents } from '../algorithms/schema-components.js'

const SUFFIX = { params: 'Params', result: 'Result' } as const
type Part = keyof typeof SUFFIX

/** The default version's components: `Sum.Params`. */
export const algorithmSchemaId = (name: string, part: keyof typeof SUFFIX): string =>
  `${name}.${SUFFIX[part]}`

/**
 * One version's components, every version's (the default's too): `Sum.1.2.0.Params`. A build's `+`
 * becomes `_`: component names are letters, digits, `.`, `-` and `_`.
 */
export const versionSchemaId = (
  { name, version }: { name: string; version: string },
  part: keyof typeof SUFFIX,
): string => `${name}.${version.replaceAll('+', '_')}.${SUFFIX[part]}`

/**
 * The module's schema as components: its own under its component name, and each schema its references
 * name under that name and a dot (schema-components.ts). References name components.
 */
const componentsOf = (
  algorithm: Algorithm,
  part: keyof typeof SUFFIX,
  id = algorithmSchemaId(algorithm.name, part),
): Record<string, Schema> => schemaComponents(algorithm.module[part], id)

/**
 * Every algorithm's params and result components, with their component names as $id: its default
 * version's under its name, and each version's under its name and version.
 */
export function algorithmSchemas(algorithms: Registry): Record<string, unknown>[] {
  const defaults = algorithms.names().map((name) => algorithms.defaultOf(name) as Algorithm)
  const named = [
    ...defaults.map((algorithm) => ({
      algorithm,
      id: (part: Part) => algorithmSchemaId(algorithm.name, part),
    })),
    ...algorithms
      .all()
      .map((algorithm) => ({ algorithm, id: (part: Part) => versionSchemaId(algorithm, part) })),
  ]
  return named.flatMap(({ algorithm, id }) =>
    (['params', 'result'] as const).flatMap((part) =>
      Object.entries(componentsOf(algorithm, part, id(part))).map(([$id, schema]) => ({ ...schema, $id })),
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
export function sampleComponent(algorithm: Algorithm, part: keyof typeof SUFFIX): unknown {
  const components = componentsOf(algorithm, part)
  return sampleOf(components[algorithmSchemaId(algorithm.name, part)] ?? {}, components)
}

/**
 * The params as a request body documents them. An algorithm that reads its params itself (a built-in's
 * inline parseParams) refuses a bad value with 400 VALIDATION_ERROR, not the schema's 422: its body is
 * its params component or any object, so that a client or proxy holding requests to the document sends
 * such a value on to that 400, and the component still says what it reads.
 */
export function documentedParams(
  algorithm: Algorithm,
  ref: (id: string) => Schema,
  id = algorithmSchemaId(algorithm.name, 'params'),
): Schema {
  if (algorithm.inline === undefined) return ref(id)
  return {
    description:
      `As ${id} describes. ${algorithm.name} reads them itself: a missing or bad member is answered ` +
      '400 VALIDATION_ERROR, with details naming it.',
    anyOf: [ref(id), { type: 'object', additionalProperties: true }],
  }
}

/** The interface's shapes that the document shows once per algorithm, in a oneOf (jobsByAlgorithm). */
const BY_ALGORITHM = ['JobRequest', 'JobStatusResponse', 'JobListItem', 'WebhookPayload'] as const

/**
 * The POST /jobs body, a job (alone and in a list) and the webhook payload with one branch per algorithm
 * (even a single one), each with its own params or result schema. The answers are a oneOf discriminated
 * by `algorithm`. The body is not discriminated: it has one more branch, any other name, so that a client
 * or proxy that holds requests to the document sends an unknown name on, and the service answers 404
 * ALGORITHM_NOT_FOUND as the interface says. Its branches exclude each other by name, but a linter cannot
 * tell that `not: {enum}` from an overlap: an anyOf, which means the same here.
 */
export function jobsByAlgorithm(schemas: Record<string, Schema>, algorithms: Registry): void {
  const names = algorithms.names()
  const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` })
  for (const base of BY_ALGORITHM) {
    const original = schemas[base]
    if (original === undefined) continue
    const mapping: Record<string, string> = {}
    for (const name of names) {
      const id = `${name}.${base}`
      const branch = structuredClone(original)
      const properties = branch.properties as Record<string, Schema>
      properties.algorithm = { type: 'string', const: name }
      if (base === 'JobRequest')
        properties.params = documentedParams(algorithms.defaultOf(name) as Algorithm, ref)
      else properties.result = { anyOf: [ref(algorithmSchemaId(name, 'result')), { type: 'null' }] }
      schemas[id] = branch
      mapping[name] = `#/components/schemas/${id}`
    }
    const branches = names.map((name) => ref(`${name}.${base}`))
    schemas[base] =
      base === 'JobRequest'
        ? { description: original.description, anyOf: [...branches, otherAlgorithm(original, names)] }
        : {
            description: original.description,
            oneOf: branches,
            discriminator: { propertyName: 'algorithm', mapping },
          }
  }
}

/** The POST /jobs body naming none of the algorithms served: valid, and answered 404. */
function otherAlgorithm(original: Schema, names: string[]): Schema {
  const branch = structuredClone(original)
  const properties = branch.properties as Record<string, Schema>
  properties.algorithm = {
    type: 'string',
    not: { enum: names },
    description: 'Any other name: answered 404 ALGORITHM_NOT_FOUND, with the names served.',
  }
  return { ...branch, description: 'An algorithm this service does not serve.' }
}

/**
 * The params components with each member's `default` said in its description instead. Generated
 * clients read a `default` in a component as "always present" (openapi-typescript makes the member
 * required), which is true of an answer, not of params: the service fills in no default, `run` sees
 * only what was sent, and a member with a default is one a client may leave out. GET
 * /algorithms/{name} keeps the schemas as the module wrote them.
 */
export function describeParamDefaults(schemas: Record<string, Schema>, algorithms: Registry): void {
  const ids = [
    ...algorithms.names().map((name) => algorithmSchemaId(name, 'params')),
    ...algorithms.all().map((algorithm) => versionSchemaId(algorithm, 'params')),
  ]
  for (const id of ids) {
    for (const [key, schema] of Object.entries(schemas))
      if (key === id || key.startsWith(`${id}.`)) {
        // A copy: the schemas the routes were given stay as they are.
        schemas[key] = structuredClone(schema)
        describeDefaults(schemas[key])
      }
  }
}

function describeDefaults(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null) return
  if (Array.isArray(schema)) {
    for (const item of schema) describeDefaults(item)
    return
  }
  const node = schema as Schema
  for (const key of [...SCHEMA_KEYWORDS.one, ...SCHEMA_KEYWORDS.oneOrList, ...SCHEMA_KEYWORDS.list])
    describeDefaults(node[key])
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

// A module's schema as OpenAPI components. A JSON Schema may refer to parts of itself (`$ref` to '#',
// to '#/$defs/Node', to an `$id` it declares, as TypeBox's Type.Ref, Type.Recursive and Type.Module
// write them); once the schema sits in an OpenAPI document those references point nowhere. So every
// schema a reference names becomes a component of its own, named under the module's own prefix
// (`Tree.Params.Node`: no two algorithms' names can clash), and every reference names its component.
// A reference that cannot be followed inside the schema (to another file, to an anchor) is refused.
import type { JsonSchema } from './algorithm.js'

/** Keywords whose value is a schema, an array of schemas, or a map of schemas (JSON Schema's applicators). */
export const SCHEMA_KEYWORDS = {
  one: ['additionalItems', 'additionalProperties', 'contains', 'propertyNames', 'not', 'if', 'then', 'else'],
  oneOrList: ['items', 'unevaluatedItems', 'unevaluatedProperties'],
  list: ['allOf', 'anyOf', 'oneOf', 'prefixItems'],
  map: ['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions'],
}
const { one: ONE, oneOrList: ONE_OR_LIST, list: LIST, map: MAP } = SCHEMA_KEYWORDS
/** Containers only: their schemas are shown where they are referred to, or not at all. */
const DEFINITIONS = ['$defs', 'definitions']
/** Meaningful only inside the module's schema: component names replace them. */
const DROPPED = ['$id', '$anchor', '$schema', ...DEFINITIONS]

/** What references resolve against when a schema declares no `$id` of its own. */
const BASE = 'https://schema.invalid/'

interface Node {
  schema: JsonSchema
  /** The `$id` resource it belongs to (the root, or the nearest schema above it with an `$id`). */
  resource: JsonSchema
  /** The base URI its references resolve against. */
  base: string
  /**
   * Where it sits, as a JSON Pointer from its resource (anchors are kept there too: they never start with
   * '/').
   */
  pointer: string
  /** The key it has in a $defs or definitions map, when it is an entry of one. */
  definition: string | undefined
}

/** The components of a schema, by name: `prefix` is the root's, every other is `prefix.<Name>`. */
export function schemaComponents(schema: JsonSchema, prefix: string): Record<string, JsonSchema> {
  const nodes = new Map<JsonSchema, Node>()
  /** Each resource by its absolute URI. */
  const resources = new Map<string, JsonSchema>()
  /** Each node by its resource and its pointer there. */
  const byPointer = new Map<JsonSchema, Map<string, JsonSchema>>()

  const place = (resource: JsonSchema, pointer: string, node: JsonSchema) => {
    const pointers = byPointer.get(resource) ?? new Map<string, JsonSchema>()
    byPointer.set(resource, pointers)
    pointers.set(pointer, node)
  }
  const visit = (node: JsonSchema, parent: Node | undefined, step: string[], definition?: string) => {
    let resource = parent?.resource ?? node
    let base = parent?.base ?? BASE
    let pointer = parent === undefined ? '' : `${parent.pointer}/${step.map(escapePointer).join('/')}`
    // An `$id` of a fragment only ('#name', draft 07) is an anchor, not a resource.
    if (typeof node.$id === 'string' && !node.$id.startsWith('#')) {
      base = new URL(node.$id, base).href.replace(/#$/, '')
      resource = node
      pointer = ''
    }
    if (resource === node) resources.set(base, node)
    const info: Node = { schema: node, resource, base, pointer, definition }
    nodes.set(node, info)
    place(resource, pointer, node)
    const anchor = typeof node.$id === 'string' && node.$id.startsWith('#') ? node.$id.slice(1) : node.$anchor
    if (typeof anchor === 'string') place(resource, anchor, node)
    // A resource is also reached from the resource around it, by its place there.
    if (parent !== undefined && resource === node)
      place(parent.resource, `${parent.pointer}/${step.map(escapePointer).join('/')}`, node)
    for (const [key, value] of Object.entries(node)) {
      if (ONE.includes(key) || ONE_OR_LIST.includes(key)) {
        if (isSchema(value)) visit(value, info, [key])
      }
      if (LIST.includes(key) || ONE_OR_LIST.includes(key)) {
        if (Array.isArray(value))
          value.forEach((item, i) => {
            if (isSchema(item)) visit(item, info, [key, String(i)])
          })
      }
      if (MAP.includes(key) && isSchema(value)) {
        for (const [name, item] of Object.entries(value)) {
          if (isSchema(item)) visit(item, info, [key, name], DEFINITIONS.includes(key) ? name : undefined)
        }
      }
    }
  }
  visit(schema, undefined, [])

  /** The schema a reference names, or an error saying why it cannot be followed. */
  const target = (ref: string, from: Node): JsonSchema => {
    const hash = ref.indexOf('#')
    const address = hash < 0 ? ref : ref.slice(0, hash)
    const fragment = hash < 0 ? '' : decodeURIComponent(ref.slice(hash + 1))
    const resource = address === '' ? from.resource : resources.get(resolve(address, from.base))
    // A pointer ('#/$defs/Node') or an anchor ('#node'), both kept by place().
    const found = resource === undefined ? undefined : byPointer.get(resource)?.get(fragment)
    if (found === undefined)
      throw new Error(
        `$ref '${ref}' names no part of the schema (the API docs can show references to the schema itself ` +
          "('#'), to a part of it ('#/$defs/Node'), or to an $id or anchor it declares, not to another file)",
      )
    return found
  }

  // The root, and every schema a reference reachable from it names: each one a component.
  const names = new Map<JsonSchema, string>([[schema, prefix]])
  const taken = new Set([prefix])
  const nameOf = (ref: unknown, from: JsonSchema): string => {
    if (typeof ref !== 'string') throw new Error('a $ref must be a string')
    const named = target(ref, nodes.get(from) as Node)
    let name = names.get(named)
    if (name === undefined) {
      const wanted = `${prefix}.${componentName(nodes.get(named) as Node)}`
      name = wanted
      for (let i = 2; taken.has(name); i++) name = `${wanted}-${i}`
      taken.add(name)
      names.set(named, name)
    }
    return name
  }

  /** The schema as its component shows it: references by component name, other components referred to. */
  const shown = (node: JsonSchema, top: boolean): JsonSchema => {
    const name = names.get(node)
    if (!top && name !== undefined) return { $ref: name }
    const copy: JsonSchema = {}
    for (const [key, value] of Object.entries(node)) {
      if (DROPPED.includes(key)) continue
      if (key === '$ref') copy.$ref = nameOf(value, node)
      else if (ONE.includes(key) || ONE_OR_LIST.includes(key) || LIST.includes(key) || MAP.includes(key))
        copy[key] = shownValue(value, MAP.includes(key))
      else copy[key] = structuredClone(value)
    }
    return copy
  }
  const shownValue = (value: unknown, isMap: boolean): unknown => {
    if (isSchema(value) && !isMap) return shown(value, false)
    const each = (item: unknown) => (isSchema(item) ? shown(item, false) : structuredClone(item))
    if (Array.isArray(value)) return value.map(each)
    if (isSchema(value))
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, each(item)]))
    return structuredClone(value)
  }

  // Until no new component is found: a schema first met in place and named by a reference later is
  // then shown as a reference there too.
  let count = 0
  while (count !== names.size) {
    count = names.size
    for (const node of [...names.keys()]) shown(node, true)
  }
  return Object.fromEntries([...names].map(([node, name]) => [name, shown(node, true)]))
}

/** A component's own name: its key under $defs, its anchor, the last part of its $id, or its place. */
function componentName(node: Node): string {
  const { $id, $anchor } = node.schema
  const id = typeof $id === 'string' ? $id : ''
  const own =
    node.definition ??
    (id.startsWith('#') ? id.slice(1) : undefined) ??
    (typeof $anchor === 'string' ? $anchor : undefined) ??
    (id !== '' ? id.replace(/#.*$/, '').split('/').at(-1) : undefined) ??
    node.pointer.split('/').slice(1).join('.')
  return own.replace(/[^A-Za-z0-9._-]/g, '_') || 'Schema'
}

/** An address resolved against a base URI; one that is no URI resolves to nothing declared. */
function resolve(address: string, base: string): string {
  try {
    return new URL(address, base).href
  } catch {
    return address
  }
}

const escapePointer = (part: string) => part.replaceAll('~', '~0').replaceAll('/', '~1')

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

// Algorithm modules written by a test into a temporary folder, to be loaded through ALGOSERVE_ALGORITHMS
// as a user's would be.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface ModuleFolder {
  dir: string
  /** The path of one of its files. */
  file(name: string): string
  remove(): void
}

/** Writes each `name: source` as a file of a fresh folder. */
export function writeModules(files: Record<string, string>): ModuleFolder {
  const dir = mkdtempSync(join(tmpdir(), 'algoserve-modules-'))
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source)
  return { dir, file: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A module's source: its default export from the members given as JavaScript text. */
export const moduleSource = (members: string): string => `export default {\n${members}\n}\n`

/**
 * The members, one a line, of a small valid module named `name` at `version` whose run is `run` (a
 * function's text).
 */
export const validMembers = (
  name: string,
  run = '(params) => ({ sum: params.a + params.b })',
  version = '1.0.0',
) => `
  name: '${name}',
  version: '${version}',
  description: 'Adds two integers.',
  params: { type: 'object', required: ['a', 'b'], additionalProperties: false, properties: { a: { type: 'integer' }, b: { type: 'integer', minimum: 0 } } },
  result: { type: 'object', required: ['sum'], properties: { sum: { type: 'integer' } } },
  examples: [{ params: { a: 1, b: 2 } }],
  run: ${run},`

/** ALGOSERVE_DEFAULT_VERSIONS as the config holds it: `name`'s default split between versions by weight. */
export const splitDefault = (name: string, ...shares: [version: string, weight: number][]) =>
  new Map([[name, shares.map(([version, weight]) => ({ version, weight }))]])

/** A valid module `name` at `version` whose sum is its minor version, to tell which version ran. */
export const minorAt = (name: string, version: string): string =>
  moduleSource(validMembers(name, `() => ({ sum: ${Number(version.split('.')[1])} })`, version))

/**
 * Modules whose schemas refer to parts of themselves, in the ways JSON Schema and TypeBox write it:
 * Tree by hand ('#/$defs/Node', recursive, and a Node of its own in its result), Graph as TypeBox's
 * Type.Module and Type.Recursive write it (a root that is only a $ref, references by $id). Both name a
 * type Node.
 */
export const REFERRING_MODULES: Record<string, string> = {
  'tree.mjs': moduleSource(`
  name: 'Tree',
  version: '1.0.0',
  description: 'Counts the nodes of a tree and names its deepest one.',
  params: {
    type: 'object', required: ['root'], additionalProperties: false,
    properties: { root: { $ref: '#/$defs/Node' } },
    $defs: {
      Node: {
        type: 'object', required: ['label'], additionalProperties: false,
        properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } },
      },
    },
  },
  result: {
    type: 'object', required: ['count', 'deepest'],
    properties: { count: { type: 'integer' }, deepest: { $ref: '#/$defs/Node' } },
    $defs: { Node: { type: 'object', required: ['label', 'depth'], properties: { label: { type: 'string' }, depth: { type: 'integer' } } } },
  },
  examples: [{ params: { root: { label: 'a', children: [{ label: 'b', children: [{ label: 'c' }] }, { label: 'd' }] } } }],
  run({ root }) {
    let count = 0
    let deepest = { label: root.label, depth: 0 }
    const visit = (node, depth) => {
      count++
      if (depth > deepest.depth) deepest = { label: node.label, depth }
      for (const child of node.children ?? []) visit(child, depth + 1)
    }
    visit(root, 0)
    return { count, deepest }
  },`),
  'graph.mjs': moduleSource(`
  name: 'Graph',
  version: '1.0.0',
  description: 'Lists the nodes an edge list names, as a chain.',
  params: {"$defs":{"Edge":{"type":"object","required":["from","to"],"properties":{"from":{"type":"string"},"to":{"type":"string"}},"$id":"Edge"},"Params":{"additionalProperties":false,"type":"object","required":["edges"],"properties":{"edges":{"type":"array","items":{"$ref":"Edge"}}},"$id":"Params"}},"$ref":"Params"},
  result: {"$id":"Node","type":"object","required":["name","next"],"properties":{"name":{"type":"string"},"next":{"type":"array","items":{"$ref":"Node"}}}},
  run({ edges }) {
    const names = [...new Set(edges.flatMap((edge) => [edge.from, edge.to]))]
    return names.reduceRight((next, name) => ({ name, next: next === null ? [] : [next] }), null) ?? { name: '', next: [] }
  },`),
}

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

/** The members, one a line, of a small valid module named `name` whose run is `run` (a function's text). */
export const validMembers = (name: string, run = '(params) => ({ sum: params.a + params.b })') => `
  name: '${name}',
  version: '1.0.0',
  description: 'Adds two integers.',
  params: { type: 'object', required: ['a', 'b'], additionalProperties: false, properties: { a: { type: 'integer' }, b: { type: 'integer', minimum: 0 } } },
  result: { type: 'object', required: ['sum'], properties: { sum: { type: 'integer' } } },
  examples: [{ params: { a: 1, b: 2 } }],
  run: ${run},`

// Each algorithm's params and result schemas as shared schemas, so that the routes $ref them and the
// OpenAPI document shows them as components. Their names are the algorithm's name (letters, digits, _
// and -) with a dot and a suffix: no two algorithms' can clash, whatever the modules call their types,
// and none is one of the interface's own names, which have no dot.
import type { Algorithm } from '../algorithms/algorithm.js'
import type { Registry } from '../algorithms/registry.js'

const SUFFIX = { params: 'Params', result: 'Result' } as const

export const algorithmSchemaId = (name: string, part: keyof typeof SUFFIX): string =>
  `${name}.${SUFFIX[part]}`

/** The module's schema under its component name, copied (the module keeps its own). */
function named(algorithm: Algorithm, part: keyof typeof SUFFIX): Record<string, unknown> {
  const schema = JSON.parse(JSON.stringify(algorithm.module[part])) as Record<string, unknown>
  return { ...schema, $id: algorithmSchemaId(algorithm.name, part) }
}

/** Every algorithm's params and result schemas, with their component names as $id. */
export function algorithmSchemas(algorithms: Registry): Record<string, unknown>[] {
  return [...algorithms.values()].flatMap((algorithm) => [
    named(algorithm, 'params'),
    named(algorithm, 'result'),
  ])
}

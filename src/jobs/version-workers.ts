// Live processes per version, by versionKey, for GET /algorithms. A backend that counts them itself
// (versionWorkers) answers; otherwise the embedded store's one process runs every loaded version of
// the algorithms it takes, and a shared store that counts by name only cannot tell: null.
import type { Algorithm } from '../algorithms/algorithm.js'
import { versionKey } from '../algorithms/registry.js'
import type { JobBackend } from './backend.js'

/** A backend that counts the live processes of each version itself. */
interface CountsVersions {
  versionWorkers(): Promise<ReadonlyMap<string, number> | null>
}

const countsVersions = (backend: JobBackend): backend is JobBackend & CountsVersions =>
  typeof (backend as Partial<CountsVersions>).versionWorkers === 'function'

export async function versionWorkers(
  backend: JobBackend,
  loaded: () => readonly Algorithm[],
): Promise<ReadonlyMap<string, number> | null> {
  if (countsVersions(backend)) return backend.versionWorkers()
  if (backend.capabilities.shared) return null
  const byName = await backend.workers()
  if (byName === null) return null
  return new Map(
    loaded().flatMap((algorithm) => {
      const count = byName.get(algorithm.name)
      return count === undefined ? [] : [[versionKey(algorithm.name, algorithm.version), count]]
    }),
  )
}

// What a process derives from the versions loaded: every one by versionKey (the jobs it takes; on Redis,
// the queues it names), and the `concurrency` of those that declare one. Worked out again at each reload.
import { versionKey } from '../algorithms/registry.js'
import type { LoadedVersions } from './backend.js'

export interface FollowedVersions {
  /** Every version loaded now, by versionKey. */
  keys(): readonly string[]
  /** The versions loaded now that declare their own `concurrency`, by versionKey. */
  readonly concurrencyOf: ReadonlyMap<string, number>
}

export function followVersions(loaded: LoadedVersions): FollowedVersions {
  let keys: string[] = []
  const concurrencyOf = new Map<string, number>()
  const fill = () => {
    keys = []
    concurrencyOf.clear()
    for (const name of loaded.names()) {
      for (const { version, concurrency } of loaded.versions(name)) {
        const key = versionKey(name, version)
        keys.push(key)
        if (concurrency !== null) concurrencyOf.set(key, concurrency)
      }
    }
  }
  fill()
  loaded.onChange(fill)
  return { keys: () => keys, concurrencyOf }
}

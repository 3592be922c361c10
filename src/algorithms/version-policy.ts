// What the operator says of versions beyond loading them: which are deprecated, and from when they go
// (ALGOSERVE_DEPRECATED_VERSIONS). Kept apart from the Registry: a reload swaps the loaded set, while this
// comes from the settings and stays; a version deprecated here and loaded only later is deprecated then.
import { versionKey } from './registry.js'

/** One version's deprecation, as the setting gives it. */
export interface Deprecation {
  /** The moment this process read the setting: RFC 9745's Deprecation date. */
  since: Date
  /** RFC 8594's Sunset: the day (UTC midnight) it may stop being served; null when none was given. */
  sunset: Date | null
}

/** The deprecated versions, by versionKey: each with its sunset day, `YYYY-MM-DD`, or null. */
export type DeprecatedVersions = ReadonlyMap<string, { sunset: string | null }>

export class VersionPolicy {
  readonly #deprecated: ReadonlyMap<string, Deprecation>

  constructor(deprecated: DeprecatedVersions = new Map(), readAt = new Date()) {
    // Whole seconds: the header says unix seconds, and every response of one process says the same.
    const since = new Date(Math.floor(readAt.getTime() / 1000) * 1000)
    this.#deprecated = new Map(
      [...deprecated].map(([key, { sunset }]) => [
        key,
        { since, sunset: sunset === null ? null : new Date(`${sunset}T00:00:00Z`) },
      ]),
    )
  }

  /** The deprecation of that version, if the operator deprecated it. */
  deprecation({ name, version }: { name: string; version: string }): Deprecation | undefined {
    return this.#deprecated.get(versionKey(name, version))
  }
}

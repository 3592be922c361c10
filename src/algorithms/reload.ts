// Reloads the algorithms without a restart (SIGHUP, POST /admin/reload, `serve --watch`): the entries of
// ALGOSERVE_ALGORITHMS are read again (a folder may hold new files), loaded into a new registry as at start,
// and that set replaces the running one in place (Registry.replaceWith), whose listeners rebuild what they
// derived from it. Anything wrong leaves the running set as it was. A version is immutable for the life of
// the process: a file whose content differs from what was loaded at its version refuses the whole reload.
import type { FastifyBaseLogger } from 'fastify'
import { ContractError, ReloadFailedError, VersionChangedError } from '../errors.js'
import { contentHash, moduleFiles } from './loader.js'
import { isBuiltIn, type Registry, versionKey } from './registry.js'

/** How the algorithms are loaded: as at start, from the files the entries name. */
export interface ReloadSource {
  /** ALGOSERVE_ALGORITHMS's entries, resolved again at each reload. */
  entries: readonly string[]
  /** Loads and checks the registry of these files as the start does; throws what is wrong. */
  load(files: string[]): Promise<Registry>
}

/** What a reload did: the versions now loaded, and those it added and removed (as `Name@version`). */
export interface ReloadOutcome {
  versions: string[]
  added: string[]
  removed: string[]
}

/** Where a version's content was first read, and its digest. */
interface Loaded {
  name: string
  version: string
  file: string
  digest: string
}

export class Reloader {
  readonly #registry: Registry
  readonly #source: ReloadSource
  readonly #log: FastifyBaseLogger
  /** Every version loaded since the start, kept after its removal: it cannot come back changed either. */
  readonly #loaded = new Map<string, Loaded>()
  /** Reloads run one after the other: two signals close together load twice, in order. */
  #queue: Promise<unknown> = Promise.resolve()

  /** `registry` is the running set, loaded from the entries at start. */
  constructor(registry: Registry, source: ReloadSource, log: FastifyBaseLogger) {
    this.#registry = registry
    this.#source = source
    this.#log = log
    for (const [key, loaded] of this.#digests(registry)) this.#loaded.set(key, loaded)
  }

  /**
   * Loads the entries again and, when they load, makes them the running set. Rejects with a
   * VersionChangedError or a ReloadFailedError, the running set unchanged. `trigger` names the cause in the
   * log: `SIGHUP`, `admin`, `watch`.
   */
  reload(trigger: string): Promise<ReloadOutcome> {
    const next = this.#queue.then(() => this.#reload(trigger))
    this.#queue = next.catch(() => {})
    return next
  }

  async #reload(trigger: string): Promise<ReloadOutcome> {
    try {
      const outcome = await this.#load()
      this.#log.info({ trigger, added: outcome.added, removed: outcome.removed }, 'algorithms reloaded')
      return outcome
    } catch (error) {
      this.#log.error({ trigger, err: error }, `reload refused: ${(error as Error).message}`)
      throw error
    }
  }

  async #load(): Promise<ReloadOutcome> {
    let next: Registry
    try {
      next = await this.#source.load(moduleFiles(this.#source.entries))
    } catch (error) {
      if (error instanceof ContractError) throw error
      throw new ReloadFailedError((error as Error).message, error)
    }
    const digests = this.#digests(next)
    for (const [key, { name, version, file, digest }] of digests) {
      const before = this.#loaded.get(key)
      if (before !== undefined && before.digest !== digest)
        throw new VersionChangedError(file, name, version, before.file)
    }
    const was = new Set(keysOf(this.#registry))
    const now = keysOf(next)
    for (const [key, loaded] of digests) if (!this.#loaded.has(key)) this.#loaded.set(key, loaded)
    this.#registry.replaceWith(next)
    return {
      versions: now,
      added: now.filter((key) => !was.has(key)),
      removed: [...was].filter((key) => !now.includes(key)),
    }
  }

  /** The digest of each version's file; the built-in modules have none of their own. */
  #digests(registry: Registry): Map<string, Loaded> {
    const digests = new Map<string, Loaded>()
    for (const algorithm of registry.all()) {
      if (isBuiltIn(algorithm)) continue
      let digest: string
      try {
        digest = contentHash(algorithm.source)
      } catch (error) {
        throw new ReloadFailedError(
          `${algorithm.source} could not be read: ${(error as Error).message}`,
          error,
        )
      }
      const { name, version, source } = algorithm
      digests.set(versionKey(name, version), { name, version, file: source, digest })
    }
    return digests
  }
}

const keysOf = (registry: Registry): string[] =>
  registry.all().map((one) => versionKey(one.name, one.version))

// The algorithms a process serves, by name and version: the built-in modules (unless
// ALGOSERVE_PRIME_CHECKER=false), then the modules of ALGOSERVE_ALGORITHMS. Several versions of one name
// load side by side; each keeps its own schemas, limits, examples and concurrency. Built once in the
// process and once in every worker thread, from the same files.
import semver from 'semver'
import { AlgorithmNotFoundError, ConfigError } from '../errors.js'
import type { Algorithm } from './algorithm.js'
import { type CheckOptions, checkModule } from './contract.js'
import { loadModuleFile } from './loader.js'
import primeChecker from './prime-checker/index.js'

const BUILT_IN = [primeChecker]

/** The algorithm POST /invoke calls, by the interface's contract. */
export const INVOKE_ALGORITHM = primeChecker.name

/** One version of an algorithm as one string: the key of its lanes, processes and queues. */
export const versionKey = (name: string, version: string): string => `${name}@${version}`

/** One version's share of the calls and jobs that name no version (a canary split), by weight. */
export interface DefaultShare {
  version: string
  weight: number
}

/** The loaded algorithms: every version of every name, and which version a name without one means. */
export class Registry {
  /** Each name's versions, highest first. */
  #byName: ReadonlyMap<string, readonly Algorithm[]>
  /** Each name's default: one version, or several by weight (a canary). */
  #defaults: ReadonlyMap<string, readonly { algorithm: Algorithm; weight: number }[]>
  #generation = 0
  readonly #listeners: ((registry: Registry) => void)[] = []

  /**
   * `algorithms` must hold no name and version twice (loadRegistry checks); `defaults` names the version a
   * name without one means where it is not the highest, or splits it between versions by weight.
   */
  constructor(
    algorithms: readonly Algorithm[],
    defaults: ReadonlyMap<string, readonly DefaultShare[]> = new Map(),
  ) {
    const byName = new Map<string, Algorithm[]>()
    for (const algorithm of algorithms) {
      const versions = byName.get(algorithm.name) ?? []
      versions.push(algorithm)
      byName.set(algorithm.name, versions)
    }
    for (const versions of byName.values()) versions.sort((a, b) => semver.rcompare(a.version, b.version))
    this.#byName = new Map([...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    for (const name of defaults.keys()) {
      if (!this.#byName.has(name))
        throw new ConfigError(`A default version is set for '${name}', which is not loaded.`)
    }
    const chosen = new Map<string, { algorithm: Algorithm; weight: number }[]>()
    for (const [name, versions] of this.#byName) {
      const shares = defaults.get(name) ?? [{ version: (versions[0] as Algorithm).version, weight: 1 }]
      chosen.set(
        name,
        shares.map(({ version, weight }) => {
          const algorithm = versions.find((one) => one.version === version)
          if (algorithm === undefined) {
            throw new ConfigError(
              `The default version ${version} of '${name}' is not loaded; loaded: ${versions.map((one) => one.version).join(', ')}.`,
            )
          }
          return { algorithm, weight }
        }),
      )
    }
    this.#defaults = chosen
  }

  /**
   * Takes `next`'s algorithms and defaults as its own (a reload): whoever holds this registry sees the new
   * set from their next read; what was derived from the old one is rebuilt by the listeners of onChange.
   */
  replaceWith(next: Registry): void {
    this.#byName = next.#byName
    this.#defaults = next.#defaults
    this.#generation++
    for (const listener of this.#listeners) listener(this)
  }

  /** The set as it is now, in a registry of its own that no reload changes. */
  snapshot(): Registry {
    const copy = new Registry([])
    copy.#byName = this.#byName
    copy.#defaults = this.#defaults
    return copy
  }

  /** Hears each replaceWith, after it. */
  onChange(listener: (registry: Registry) => void): void {
    this.#listeners.push(listener)
  }

  /** How many times the set was replaced: what is derived from it can be kept by generation. */
  get generation(): number {
    return this.#generation
  }

  /** How many names it serves. */
  get size(): number {
    return this.#byName.size
  }

  /** The names, sorted. */
  names(): string[] {
    return [...this.#byName.keys()]
  }

  has(name: string): boolean {
    return this.#byName.has(name)
  }

  /** Every version of every name: by name, then highest version first. */
  all(): Algorithm[] {
    return [...this.#byName.values()].flat()
  }

  /** A name's versions, highest first; none for a name not loaded. */
  versions(name: string): readonly Algorithm[] {
    return this.#byName.get(name) ?? []
  }

  /**
   * The version a name without one means: the operator's choice, else the highest. Under a canary split,
   * the first of the split (the stable one) here; pickDefault draws between them.
   */
  defaultOf(name: string): Algorithm | undefined {
    return this.#defaults.get(name)?.[0]?.algorithm
  }

  /** The default's split by weight, when the operator set one; one version otherwise. */
  defaultShares(name: string): readonly { algorithm: Algorithm; weight: number }[] {
    return this.#defaults.get(name) ?? []
  }

  /** The version one call or job without a version runs: under a canary split, drawn by weight. */
  pickDefault(name: string, random = Math.random()): Algorithm | undefined {
    const shares = this.#defaults.get(name)
    if (shares === undefined) return undefined
    const total = shares.reduce((sum, share) => sum + share.weight, 0)
    let left = random * total
    for (const share of shares) {
      left -= share.weight
      if (left < 0) return share.algorithm
    }
    return shares.at(-1)?.algorithm
  }

  /** Exactly that version of a name. */
  exact(name: string, version: string): Algorithm | undefined {
    return this.versions(name).find((one) => one.version === version)
  }

  /**
   * The version `wanted` picks: none, the default (drawn, under a canary split); an exact version, that
   * one; a semver range (`1.x`, `^1.2`), the highest loaded match. Undefined when nothing matches or
   * `wanted` is neither.
   */
  resolve(name: string, wanted?: string): Algorithm | undefined {
    if (wanted === undefined) return this.pickDefault(name)
    const versions = this.versions(name)
    const exact = versions.find((one) => one.version === wanted)
    if (exact !== undefined) return exact
    if (semver.validRange(wanted) === null) return undefined
    return versions.find((one) => semver.satisfies(one.version, wanted))
  }
}

/**
 * The algorithm POST /invoke calls, when it is served: the built-in PrimeChecker (ALGOSERVE_PRIME_CHECKER),
 * not a module of that name.
 */
export function invokeAlgorithm(registry: Registry): Algorithm | undefined {
  return registry.versions(INVOKE_ALGORITHM).find((algorithm) => algorithm.module === primeChecker)
}

/** Whether an algorithm is one of the built-in modules: its contract is not the deployment's to edit. */
export const isBuiltIn = (algorithm: Algorithm): boolean =>
  BUILT_IN.some((module) => module === algorithm.module)

/** The built-in modules, checked like any other. */
export function builtInAlgorithms(options: CheckOptions = {}): Algorithm[] {
  return BUILT_IN.map((module) => checkModule(module, `built-in module ${module.name}`, options))
}

/**
 * The registry of the built-in modules (unless `builtIn` is false: ALGOSERVE_PRIME_CHECKER) and the module
 * files given (moduleFiles() resolves them). The same name and version twice is an error naming both files.
 */
export async function loadRegistry(
  files: readonly string[],
  options: CheckOptions = {},
  builtIn = true,
  defaults: ReadonlyMap<string, readonly DefaultShare[]> = new Map(),
): Promise<Registry> {
  const loaded = builtIn ? builtInAlgorithms(options) : []
  // One at a time: a module's top-level code runs in the order the setting names it.
  for (const file of files) loaded.push(await loadModuleFile(file, options))
  const seen = new Map<string, Algorithm>()
  for (const algorithm of loaded) {
    // Kept for the built-in even when it is not served: POST /invoke and its clients mean that one.
    if (algorithm.name === INVOKE_ALGORITHM && !isBuiltIn(algorithm)) {
      throw new ConfigError(
        builtIn
          ? `Algorithm module ${algorithm.source}: the name '${algorithm.name}' is taken already by built-in module ${INVOKE_ALGORITHM}.`
          : `Algorithm module ${algorithm.source}: the name '${algorithm.name}' is kept for the built-in module, served or not.`,
      )
    }
    const key = versionKey(algorithm.name, algorithm.version)
    const first = seen.get(key)
    if (first !== undefined) {
      throw new ConfigError(
        `Algorithm module ${algorithm.source}: the name '${algorithm.name}' is taken already by ${first.source} at the same version, ${algorithm.version} (versions of one name load side by side).`,
      )
    }
    seen.set(key, algorithm)
  }
  return new Registry(loaded, defaults)
}

/**
 * The version a call or job asks for (`wanted`: none for the default, an exact version or a semver
 * range), or the 404 ALGORITHM_NOT_FOUND that lists the loaded names and, for a known name, its versions.
 */
export function resolveVersion(registry: Registry, name: string, wanted?: string): Algorithm {
  const found = registry.resolve(name, wanted)
  if (found !== undefined) return found
  const versions = registry.versions(name)
  throw versions.length === 0 || wanted === undefined
    ? new AlgorithmNotFoundError(name, registry.names())
    : new AlgorithmNotFoundError(name, registry.names(), {
        wanted,
        loaded: versions.map((one) => one.version),
      })
}

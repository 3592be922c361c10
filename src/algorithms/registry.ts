// The algorithms a process serves, by name: the built-in modules (unless ALGOSERVE_PRIME_CHECKER=false), then
// the modules of ALGOSERVE_ALGORITHMS. Built once in the process and once in every worker thread, from the
// same files.
import { ConfigError } from '../errors.js'
import type { Algorithm } from './algorithm.js'
import { type CheckOptions, checkModule } from './contract.js'
import { loadModuleFile } from './loader.js'
import primeChecker from './prime-checker/index.js'

export type Registry = ReadonlyMap<string, Algorithm>

const BUILT_IN = [primeChecker]

/** The algorithm POST /invoke calls, by the interface's contract. */
export const INVOKE_ALGORITHM = primeChecker.name

/**
 * The algorithm POST /invoke calls, when it is served: the built-in PrimeChecker (ALGOSERVE_PRIME_CHECKER),
 * not a module of that name.
 */
export function invokeAlgorithm(registry: Registry): Algorithm | undefined {
  const algorithm = registry.get(INVOKE_ALGORITHM)
  return algorithm?.module === primeChecker ? algorithm : undefined
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
 * files given (moduleFiles() resolves them).
 */
export async function loadRegistry(
  files: readonly string[],
  options: CheckOptions = {},
  builtIn = true,
): Promise<Registry> {
  const loaded = builtIn ? builtInAlgorithms(options) : []
  // One at a time: a module's top-level code runs in the order the setting names it.
  for (const file of files) loaded.push(await loadModuleFile(file, options))
  const registry = new Map<string, Algorithm>()
  for (const algorithm of loaded) {
    // Kept for the built-in even when it is not served: POST /invoke and its clients mean that one.
    if (!builtIn && algorithm.name === INVOKE_ALGORITHM) {
      throw new ConfigError(
        `Algorithm module ${algorithm.source}: the name '${algorithm.name}' is kept for the built-in module, served or not.`,
      )
    }
    const first = registry.get(algorithm.name)
    if (first !== undefined) {
      throw new ConfigError(
        `Algorithm module ${algorithm.source}: the name '${algorithm.name}' is taken already by ${first.source}.`,
      )
    }
    registry.set(algorithm.name, algorithm)
  }
  return registry
}

// Loads the algorithm modules named by ALGOSERVE_ALGORITHMS (files, folders whose .js/.mjs files are
// each a module, installed package names; folders with an algorithm.json are process algorithms,
// process-manifest.ts), and checks each against the contract (contract.ts, which compiles its schemas). The
// same list is loaded in the process and in every worker thread; anything wrong stops the start with an
// error naming the file and the problem.
import { readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, extname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ConfigError } from '../errors.js'
import type { Algorithm } from './algorithm.js'
import { type CheckOptions, checkModule } from './contract.js'
import { loadManifest, MANIFEST } from './process-manifest.js'

const MODULE_EXTENSIONS = ['.js', '.mjs']

/**
 * The module files a setting names, in order: a folder with an algorithm.json gives that file (a process
 * algorithm); another folder gives its .js/.mjs files and the algorithm.json of its folders, sorted by name.
 */
export function moduleFiles(entries: readonly string[], cwd = process.cwd()): string[] {
  const files: string[] = []
  for (const entry of entries) {
    const path = resolve(cwd, entry)
    const stat = statSync(path, { throwIfNoEntry: false })
    if (stat?.isDirectory()) {
      const manifest = manifestIn(path)
      if (manifest !== undefined) {
        files.push(manifest)
        continue
      }
      const inside = readdirSync(path, { withFileTypes: true })
        .map((item) => {
          const itemPath = join(path, item.name)
          if (item.isFile() && MODULE_EXTENSIONS.includes(extname(item.name))) return itemPath
          return item.isDirectory() ? manifestIn(itemPath) : undefined
        })
        .filter((file) => file !== undefined)
        .sort()
      if (inside.length === 0)
        throw new ConfigError(
          `ALGOSERVE_ALGORITHMS: the folder ${path} has no .js or .mjs module and no folder with an ${MANIFEST}.`,
        )
      files.push(...inside)
    } else if (stat?.isFile()) {
      files.push(path)
    } else if (entry.startsWith('.') || entry.startsWith('/')) {
      throw new ConfigError(`ALGOSERVE_ALGORITHMS: ${path} does not exist.`)
    } else {
      files.push(packageEntry(entry, cwd))
    }
  }
  return files
}

/** The folder's algorithm.json, when it has one. */
function manifestIn(folder: string): string | undefined {
  const file = join(folder, MANIFEST)
  return statSync(file, { throwIfNoEntry: false })?.isFile() ? file : undefined
}

/** An installed package's entry file, found from `cwd` as an import there would find it. */
function packageEntry(name: string, cwd: string): string {
  try {
    return createRequire(join(cwd, 'package.json')).resolve(name)
  } catch {
    throw new ConfigError(
      `ALGOSERVE_ALGORITHMS: '${name}' is neither a file, a folder nor a package installed for ${cwd}.`,
    )
  }
}

/** Imports a module file and checks its default export; reads and checks an algorithm.json. */
export async function loadModuleFile(file: string, options: CheckOptions = {}): Promise<Algorithm> {
  if (basename(file) === MANIFEST) return loadManifest(file, options)
  let imported: { default?: unknown }
  try {
    imported = await import(pathToFileURL(file).href)
  } catch (error) {
    throw new ConfigError(`Algorithm module ${file} could not be loaded: ${(error as Error).message}`)
  }
  return checkModule(imported.default, file, options)
}

// Loads the algorithm modules named by ALGOSERVE_ALGORITHMS (files, folders whose .js/.mjs files are
// each a module, installed package names; folders with an algorithm.json are process algorithms,
// process-manifest.ts), and checks each against the contract (contract.ts, which compiles its schemas). The
// same list is loaded in the process and in every worker thread; anything wrong stops the start with an
// error naming the file and the problem.
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname, extname, join, resolve } from 'node:path'
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

/**
 * A digest of what an algorithm file is: a module's bytes; for an algorithm.json, its bytes and those of
 * each part of its command that is a file of its folder (the script or program it starts). A version is
 * immutable: a reload refuses a file whose digest changed at a version already loaded.
 */
export function contentHash(file: string): string {
  const hash = createHash('sha256')
  const bytes = readFileSync(file)
  hash.update(bytes)
  if (basename(file) === MANIFEST) {
    let command: unknown
    try {
      command = (JSON.parse(bytes.toString('utf8')) as { command?: unknown }).command
    } catch {
      // Unreadable JSON: loadManifest says why.
    }
    for (const part of Array.isArray(command) ? command : []) {
      if (typeof part !== 'string') continue
      const path = resolve(dirname(file), part)
      if (statSync(path, { throwIfNoEntry: false })?.isFile())
        hash.update(`\0${part}\0`).update(readFileSync(path))
    }
  }
  return hash.digest('hex').slice(0, 16)
}

/**
 * Imports a module file and checks its default export; reads and checks an algorithm.json. The import's
 * URL carries the file's digest: Node keeps a module by its URL, and a file that changed since (a reload
 * of a new version written over an old one) is imported afresh. Files it imports itself are kept as
 * they were first imported.
 */
export async function loadModuleFile(file: string, options: CheckOptions = {}): Promise<Algorithm> {
  if (basename(file) === MANIFEST) return loadManifest(file, options)
  let imported: { default?: unknown }
  try {
    imported = await import(`${pathToFileURL(file).href}?v=${contentHash(file)}`)
  } catch (error) {
    throw new ConfigError(`Algorithm module ${file} could not be loaded: ${(error as Error).message}`)
  }
  return checkModule(imported.default, file, options)
}

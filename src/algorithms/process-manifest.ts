// A process algorithm: a folder whose algorithm.json holds the module contract's members (but `run`)
// plus `command`, the argv started in that folder, and `instances`, the processes kept (default 1). Its
// runs go over JSON lines to those processes (src/execution/algorithm-process.ts). The file is checked
// at start like a module, and anything wrong stops the start naming the file.
import { readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { ConfigError } from '../errors.js'
import type { Algorithm } from './algorithm.js'
import { type CheckOptions, checkModule } from './contract.js'

export const MANIFEST = 'algorithm.json'

const MAX_INSTANCES = 64

/** The algorithm of an algorithm.json, checked; a ConfigError names the file and what is wrong. */
export function loadManifest(file: string, options: CheckOptions = {}): Algorithm {
  const fail = (problem: string): never => {
    throw new ConfigError(`Algorithm ${file}: ${problem}.`)
  }
  let value: unknown
  try {
    value = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    return fail(`it could not be read as JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fail('it must hold an object')
  const { command, instances = 1, ...members } = value as Record<string, unknown>
  if ('run' in members) fail("unknown member 'run' (the process is the run: see 'command')")
  if (
    !Array.isArray(command) ||
    command.length === 0 ||
    !command.every((part) => typeof part === 'string' && part !== '')
  )
    fail("'command' must be an array of non-empty strings: the program and its arguments")
  if (
    typeof instances !== 'number' ||
    !Number.isInteger(instances) ||
    instances < 1 ||
    instances > MAX_INSTANCES
  )
    fail(`'instances' must be a whole number from 1 to ${MAX_INSTANCES}`)
  const algorithm = checkModule({ ...members, run: runsElsewhere }, file, options)
  return {
    ...algorithm,
    process: { command: command as string[], cwd: dirname(file), instances: instances as number },
  }
}

/** Never called: the executor sends a process algorithm's runs to its processes. */
function runsElsewhere(): never {
  throw new Error('a process algorithm runs in its own processes')
}

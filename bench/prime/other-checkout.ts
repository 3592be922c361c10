// The A/Bs' common part: load another checkout's engine into this process and time work in CPU ms. Each
// checkout's kernel.ts loads the wasm built next to it, so both engines live side by side; CPU time (user +
// system, process.cpuUsage) is what other processes on a shared machine do not add to.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { primeChecker } from '../../src/algorithms/prime-checker/index.js'

/** The other checkout's path: the script's first argument, else a usage error quoting `usage`. */
export function checkoutArgument(usage: string): string {
  const path = process.argv[2]
  if (path === undefined || path === '') throw new Error(`usage: ${usage}`)
  return path
}

/**
 * A module of the checkout at `checkout`, by its path there (e.g. src/algorithms/prime-checker/kernel.ts).
 */
export async function importFrom<Module>(checkout: string, path: string): Promise<Module> {
  return (await import(pathToFileURL(resolve(checkout, path)).href)) as Module
}

/** The checkout's PrimeChecker (its kernel built). */
export async function primeCheckerOf(checkout: string): Promise<typeof primeChecker> {
  type IndexModule = { primeChecker: typeof primeChecker }
  return (await importFrom<IndexModule>(checkout, 'src/algorithms/prime-checker/index.ts')).primeChecker
}

/** CPU ms, all threads, that `work` takes. */
export function cpuMs(work: () => void): number {
  const start = process.cpuUsage()
  work()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}

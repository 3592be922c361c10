// Processes found by the marker Algoserve gives the programs of process algorithms (ALGOSERVE_OWNER in
// /proc/<pid>/environ, which their descendants inherit), never by name: Linux only.
import { readdirSync, readFileSync } from 'node:fs'

export const NO_PROC = process.platform !== 'linux' && 'the processes are read from /proc (Linux only)'

export interface MarkedProcess {
  pid: number
  /** Its process group and session. */
  group: number
  session: number
  /** The value of ALGOSERVE_OWNER: `<owner token>.<program>`. */
  marker: string
}

/** The live processes whose ALGOSERVE_OWNER passes `test` (zombies carry no environment). */
export function markedProcesses(test: (marker: string) => boolean = () => true): MarkedProcess[] {
  const found: MarkedProcess[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      const variable = readFileSync(`/proc/${entry}/environ`, 'latin1')
        .split('\0')
        .find((item) => item.startsWith('ALGOSERVE_OWNER='))
      if (variable === undefined) continue
      const marker = variable.slice('ALGOSERVE_OWNER='.length)
      if (!test(marker)) continue
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      found.push({ pid: Number(entry), group: Number(fields[2]), session: Number(fields[3]), marker })
    } catch {
      // Gone meanwhile.
    }
  }
  return found
}

/** The pid of the process whose environment holds `variable` exactly (`NAME=value`), if one lives. */
export function processWithVariable(variable: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(variable))
        return Number(entry)
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined
}

/** Running: there and not a zombie (one that was killed and whose parent has not reaped it yet). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

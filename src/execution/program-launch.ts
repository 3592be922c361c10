// How a process algorithm's program is started and how its end is taken: in a process group of its own,
// with its owner's marker (process-owner.ts) and, when it has one, its memory limit as an OS limit; and
// its end taken at its exit, not at the close of its pipes, which a descendant may hold open forever.
import { type ChildProcess, spawn } from 'node:child_process'
import type { ProcessSpec } from '../algorithms/algorithm.js'
import { killMarked, programEnvironment, signalProcess } from './process-owner.js'

/** After an exit, how long what it wrote before is still read; then its pipes are closed. */
export const DRAIN_MS = 250
/** What programs write on stderr when an allocation fails: Python, V8, C++, C. */
const OUT_OF_MEMORY =
  /MemoryError|JavaScript heap out of memory|Fatal process out of memory|allocation failed|std::bad_alloc|Cannot allocate memory|[Oo]ut of memory/
/** How much of the last stderr chunk is kept, for a message cut between two. */
const STDERR_TAIL = 64

export interface Program {
  child: ChildProcess
  /** Its process's marker (process-owner.ts). */
  marker: string
  /** Its memory limit in MB, or 0 for none. */
  memoryMb: number
  /** It said on stderr that an allocation failed. */
  readonly outOfMemory: boolean
}

/**
 * Starts the program of `spec`. With `memoryMb`, /bin/sh sets RLIMIT_DATA (`ulimit -d`) and execs it:
 * its process and each of its children may then hold that much private memory, each. RLIMIT_AS would
 * break programs that reserve address space they never use (V8 reserves gigabytes).
 */
export function launchProgram(spec: ProcessSpec, memoryMb = 0): Program {
  const { env, marker } = programEnvironment()
  const [command, ...args] =
    memoryMb > 0
      ? [
          '/bin/sh',
          '-c',
          'ulimit -d "$1" && shift && exec "$@"',
          'algoserve',
          String(memoryMb * 1024),
        ].concat(spec.command)
      : spec.command
  // Its own process group: a signal to the group reaches what it started too, and a Ctrl-C meant for
  // the service reaches the service alone, which stops its processes in order.
  const child = spawn(command as string, args, { cwd: spec.cwd, detached: true, env, stdio: 'pipe' })
  let outOfMemory = false
  let tail = ''
  if (memoryMb > 0)
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1')
      outOfMemory ||= OUT_OF_MEMORY.test(text)
      tail = text.slice(-STDERR_TAIL)
    })
  return {
    child,
    marker,
    memoryMb,
    get outOfMemory() {
      return outOfMemory
    },
  }
}

/**
 * Calls `end` once the program has exited and what it wrote before is read: at the close of its pipes,
 * or DRAIN_MS after its exit, when something it started holds them, and then they are destroyed. What
 * it left running, in its group or out of it, is killed at its exit.
 */
export function onProgramEnd({ child, marker }: Program, end: (how: string) => void): void {
  let how: string | undefined
  let drain: NodeJS.Timeout | undefined
  let ended = false
  const finish = () => {
    if (how === undefined || ended) return
    ended = true
    clearTimeout(drain)
    child.stdout?.destroy()
    child.stderr?.destroy()
    end(how)
  }
  child.once('exit', (code, signal) => {
    how = code === null ? `was killed by ${signal}` : `exited with code ${code}`
    if (child.pid !== undefined) signalProcess(-child.pid, 'SIGKILL')
    void killMarked(marker)
    drain = setTimeout(finish, DRAIN_MS)
  })
  // Always after 'exit'.
  child.once('close', finish)
}

/** How a call ended by its program's exit is told: its memory limit when it said it ran out. */
export function exitDuringCall(program: Program, how: string): string {
  return program.memoryMb > 0 && program.outOfMemory
    ? `its process passed its memory limit of ${program.memoryMb} MB (it ${how})`
    : `its process ${how} during the call`
}

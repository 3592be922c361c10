// What ties a program started for a process algorithm to the Algoserve process that started it, so
// that nothing it started outlives it. Every program gets ALGOSERVE_OWNER=<token>.<n> in its
// environment, which its descendants inherit whatever group or session they move to; <token> is this
// Algoserve process's, <n> the program's. A watchdog (/bin/sh, about a megabyte) holds a pipe from
// this process: when the pipe closes, however this process ended, it kills every process that carries
// the token, and their groups. A successor started on the same data directory ends what a predecessor
// recorded there left behind, for when the watchdog died with it. Processes are found by reading
// /proc/<pid>/environ: Linux only, and only those this user may read.
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import { randomHex } from '../jobs/random-hex.js'

export const OWNER_VARIABLE = 'ALGOSERVE_OWNER'
const SUPPORTED = process.platform === 'linux'
/** The folder of the data directory where each Algoserve process records its token. */
const RECORDS = 'process-owners'
/** Rounds of a scan: a process forked while the last round was killing is found by the next. */
const SCAN_ROUNDS = 5

const token = randomHex(16)
let programs = 0
let watchdog: ChildProcess | undefined

// $1 is the marker's prefix. Reads stdin to its end (its owner is gone), then kills what carries the
// prefix, and the group of each, until a round finds none. `read` is a builtin: one grep per round.
const WATCHDOG = `
while read -r _; do :; done
for round in 1 2 3 4 5; do
  found=
  for file in $(grep -lsxz "$1[0-9]*" /proc/[0-9]*/environ); do
    pid=\${file#/proc/}; pid=\${pid%/environ}
    found=1
    stat=; read -r stat < "/proc/$pid/stat" 2>/dev/null
    set -- "$1" \${stat##*) }
    kill -KILL "$pid" 2>/dev/null
    case "$4" in ''|*[!0-9]*|0|1) ;; *) kill -KILL -- "-$4" 2>/dev/null ;; esac
  done
  [ -z "$found" ] && exit 0
done
`

/** The environment of a new program, with a marker of its own; starts the watchdog the first time. */
export function programEnvironment(): { env: NodeJS.ProcessEnv; marker: string } {
  startWatchdog()
  const marker = `${token}.${programs++}`
  return { env: { ...process.env, [OWNER_VARIABLE]: marker }, marker }
}

function startWatchdog(): void {
  if (!SUPPORTED || watchdog !== undefined) return
  const { [OWNER_VARIABLE]: _, ...env } = process.env
  // A session of its own: a signal to this process's group (a Ctrl-C) leaves it to do its work.
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'algoserve-watchdog', `${OWNER_VARIABLE}=${token}.`], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    env: { ...env, ALGOSERVE_WATCHDOG: token },
  })
  watchdog = child
  child.on('error', () => {})
  child.stdin?.on('error', () => {})
  // One that died is started again with the next program.
  child.once('exit', () => {
    if (watchdog === child) watchdog = undefined
  })
  // It must not keep this process alive: it is waiting for this process to end.
  child.unref()
  ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
}

/** Kills, with their groups, the processes that carry exactly `marker` (a program and its descendants). */
export function killMarked(marker: string): Promise<number> {
  return killCarrying((value) => value === marker)
}

/** Each process whose marker passes `test`, and its group, gets SIGKILL, round after round; how many. */
async function killCarrying(test: (marker: string) => boolean): Promise<number> {
  if (!SUPPORTED) return 0
  let killed = 0
  for (let round = 0; round < SCAN_ROUNDS; round++) {
    const found = await marked(test)
    if (found.length === 0) break
    for (const { pid, group } of found) {
      signalProcess(pid, 'SIGKILL')
      if (group > 1 && group !== process.pid) signalProcess(-group, 'SIGKILL')
    }
    killed += found.length
  }
  return killed
}

async function marked(test: (marker: string) => boolean): Promise<{ pid: number; group: number }[]> {
  const prefix = `${OWNER_VARIABLE}=`
  const entries = (await readdir('/proc')).filter((entry) => /^[0-9]+$/.test(entry))
  const found = await Promise.all(
    entries.map(async (entry) => {
      const pid = Number(entry)
      if (pid === process.pid) return undefined
      try {
        const variable = (await readFile(`/proc/${entry}/environ`, 'latin1'))
          .split('\0')
          .find((item) => item.startsWith(prefix))
        if (variable === undefined || !test(variable.slice(prefix.length))) return undefined
        const stat = await readFile(`/proc/${entry}/stat`, 'latin1')
        // The command may hold spaces and parentheses: the fields after its closing one are fixed.
        return { pid, group: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) }
      } catch {
        // Gone meanwhile, or not ours to read.
        return undefined
      }
    }),
  )
  return found.filter((process) => process !== undefined)
}

/** Sends a signal to a process, or to a group as `-pgid`; one that is gone already is no error. */
export function signalProcess(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // Gone already.
  }
}

interface OwnerRecord {
  pid: number
  /** Its start, in clock ticks since boot (/proc/<pid>/stat): a pid taken again has another. */
  start: string
  boot: string
}

function ownRecord(pid: number): OwnerRecord | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] as string
    return { pid, start, boot: readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim() }
  } catch {
    return undefined
  }
}

/**
 * At start: ends what predecessors recorded in `dataDir` left running once they are gone (their
 * watchdog may have died with them), then records this process; returns what removes the record.
 */
export async function recordOwner(dataDir: string, log: FastifyBaseLogger): Promise<() => Promise<void>> {
  const me = SUPPORTED ? ownRecord(process.pid) : undefined
  if (me === undefined) return async () => {}
  const folder = join(dataDir, RECORDS)
  const file = join(folder, token)
  try {
    await mkdir(folder, { recursive: true })
    for (const other of await readdir(folder)) {
      if (other === token) continue
      const record = JSON.parse(await readFile(join(folder, other), 'utf8').catch(() => '{}')) as OwnerRecord
      // Another boot, or another machine sharing the folder: its processes are not here to end.
      if (record.boot !== me.boot || ownRecord(record.pid)?.start === record.start) continue
      const killed = await killCarrying((marker) => marker.startsWith(`${other}.`))
      if (killed > 0)
        log.warn({ killed }, 'ended processes of process algorithms left behind by an Algoserve process gone')
      await unlink(join(folder, other)).catch(() => {})
    }
    await writeFile(file, JSON.stringify(me))
  } catch (error) {
    log.warn({ err: error, folder }, 'could not record the processes of process algorithms for a successor')
    return async () => {}
  }
  return () => unlink(file).catch(() => {})
}

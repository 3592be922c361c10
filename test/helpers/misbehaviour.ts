// What the misbehaviour suite (test/misbehaviour/) measures while a bad algorithm runs: /healthz latency,
// a process's resident memory, and the processes a run started, read from /proc (never found by name),
// to tell which of them outlived it.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sleep, until } from './time.js'

/** The folder of the misbehaving algorithms; `fixture('busy-loop.mjs')` is one of them. */
export const fixture = (name: string): string =>
  fileURLToPath(new URL(`../fixtures/misbehaving/${name}`, import.meta.url))

/**
 * A new temporary folder holding the algorithm.json of the program that misbehaves on demand
 * (misbehaving/on-demand-js), other `members` given; the caller removes the folder.
 */
export function onDemandFolder(members: Record<string, unknown> = {}): string {
  const folder = mkdtempSync(join(tmpdir(), 'algoserve-on-demand-'))
  const manifest = {
    name: 'Misbehaving',
    version: '1.0.0',
    description: 'Misbehaves on demand.',
    params: { type: 'object' },
    result: { type: 'object', properties: { pid: { type: 'integer' } } },
    command: [process.execPath, fixture('on-demand-js/process.mjs')],
    ...members,
  }
  writeFileSync(join(folder, 'algorithm.json'), JSON.stringify(manifest))
  return folder
}

export const NOT_LINUX = process.platform !== 'linux' && 'the processes are read from /proc (Linux only)'

/** The Python twins of the programs need python3 (its standard library only); without it they are skipped. */
export const NO_PYTHON = (() => {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore', timeout: 10_000 })
    return false
  } catch {
    return 'python3 is not installed'
  }
})()

/** An answer's status and its JSON body (the contract's error shape, or a result). */
export interface Answer {
  status: number
  body: { error?: string; message?: string; result?: Record<string, unknown>; job_id?: string }
  ms: number
}

/** POST /algorithms/{name}/invoke with `params`; fails if no answer comes within `timeoutMs`. */
export async function invoke(
  url: string,
  name: string,
  params: unknown,
  timeoutMs = 30_000,
): Promise<Answer> {
  const start = performance.now()
  try {
    const response = await fetch(`${url}/algorithms/${name}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
      signal: AbortSignal.timeout(timeoutMs),
    })
    const body = (await response.json()) as Answer['body']
    return { status: response.status, body, ms: performance.now() - start }
  } catch (error) {
    if ((error as Error).name !== 'TimeoutError') throw error
    throw new Error(`${name} gave no answer within ${timeoutMs} ms`)
  }
}

/**
 * The /healthz p99 that tells a held event loop from a busy machine. The misbehaviours it is used for
 * would hold the loop for most of a second if they held it at all (a 1 s loop; 15 MB read with
 * lossless-json at about 20 MB/s), while a 2-core machine shared with the program, the output thread and
 * the test's own process watch delays answers by up to 150 ms without anything being held.
 */
export const HELD_LOOP_MS = 300

export interface Latencies {
  count: number
  p99: number
  max: number
}

/**
 * Asks GET /healthz every `intervalMs` until stopped, one request at a time. A request is timed from
 * when it was due, not from when it was sent: an event loop stalled for 300 ms then shows in the p99 as
 * the 30 requests that were due meanwhile, not as one slow request among hundreds.
 */
export function sampleHealth(url: string, intervalMs = 10): { stop(): Promise<Latencies> } {
  const latencies: number[] = []
  let stopped = false
  const loop = (async () => {
    let due = performance.now()
    while (!stopped) {
      const wait = due - performance.now()
      if (wait > 0) await sleep(wait)
      try {
        await (await fetch(`${url}/healthz`)).arrayBuffer()
      } catch {
        // A connection dropped under a stall counts as late as it failed.
      }
      latencies.push(performance.now() - due)
      due += intervalMs
    }
  })()
  return {
    async stop() {
      stopped = true
      await loop
      const sorted = [...latencies].sort((a, b) => a - b)
      const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN
      return { count: sorted.length, p99: at(0.99), max: at(1) }
    },
  }
}

/** The resident memory of a process, in bytes (VmRSS of /proc/<pid>/status). */
export function rssOf(pid: number): number {
  const kb = /VmRSS:\s+([0-9]+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  return kb === undefined ? 0 : Number(kb) * 1024
}

/** Reads the resident memory of `pid` every `intervalMs` until stopped; gives the highest seen. */
export function sampleRss(pid = process.pid, intervalMs = 20): { stop(): number } {
  let peak = rssOf(pid)
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid))
    } catch {
      // The process is gone.
    }
  }, intervalMs).unref()
  return {
    stop() {
      clearInterval(timer)
      return peak
    },
  }
}

/** One process as /proc shows it. `start` (ticks since boot) tells it apart from a later one of its pid. */
export interface ProcessEntry {
  pid: number
  ppid: number
  pgid: number
  sid: number
  state: string
  start: number
}

/** The process `pid`, or undefined once it is gone. */
export function readProcess(pid: number): ProcessEntry | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command may hold spaces and parentheses: the fields after its closing parenthesis are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return {
    pid,
    state: fields[0] as string,
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    start: Number(fields[19]),
  }
}

/** Every process there is now. */
export function processTable(): ProcessEntry[] {
  return readdirSync('/proc')
    .filter((entry) => /^[0-9]+$/.test(entry))
    .flatMap((entry) => readProcess(Number(entry)) ?? [])
}

/** The processes below `root` (its children, theirs, and so on) by their parent ids. */
export function descendantsOf(root: number, table = processTable()): ProcessEntry[] {
  const found: ProcessEntry[] = []
  const parents = new Set([root])
  for (let grew = true; grew; ) {
    grew = false
    for (const entry of table) {
      if (parents.has(entry.ppid) && !parents.has(entry.pid)) {
        parents.add(entry.pid)
        found.push(entry)
        grew = true
      }
    }
  }
  return found
}

/** Still running: its pid holds the same process, and it is not a zombie waiting to be reaped. */
export function running(entry: ProcessEntry): boolean {
  const now = readProcess(entry.pid)
  return now !== undefined && now.start === entry.start && now.state !== 'Z'
}

/** The working folder of a process, or undefined once it is gone (or cannot be read). */
export function cwdOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`)
  } catch {
    return undefined
  }
}

/**
 * The processes a service keeps for a program algorithm: its children started in the program's folder
 * (the service starts each there). A process those start has the program as its parent, not the service.
 */
export function programProcesses(servicePid: number, folder: string): ProcessEntry[] {
  return descendantsOf(servicePid).filter(
    (entry) => entry.ppid === servicePid && cwdOf(entry.pid) === folder && running(entry),
  )
}

/**
 * Records, every `intervalMs` until stopped, each process below `root` that was not there when the watch
 * began: what a run starts, even a process that later leaves its group or loses its parent.
 */
export function watchProcesses(root: number, intervalMs = 20): ProcessWatch {
  return new ProcessWatch(root, intervalMs)
}

export class ProcessWatch {
  readonly #root: number
  readonly #before: Set<string>
  readonly #seen = new Map<string, ProcessEntry>()
  readonly #timer: NodeJS.Timeout

  constructor(root: number, intervalMs: number) {
    this.#root = root
    this.#before = new Set(descendantsOf(root).map(key))
    // Unreferenced: a test that fails before stopping it must not keep its file running.
    this.#timer = setInterval(() => this.sample(), intervalMs).unref()
  }

  /** Looks once now (also done every interval). */
  sample(): void {
    const table = processTable()
    const below = descendantsOf(this.#root, table)
    // A process in a group or session that a new process leads is the run's too, even once reparented
    // away from root. Groups led by others (the test runner's, which a child started by a test shares)
    // are not.
    const leaders = new Set(
      [...this.#seen.values()].filter((e) => e.pgid === e.pid || e.sid === e.pid).map((e) => e.pid),
    )
    const grouped = table.filter((entry) => leaders.has(entry.pgid) || leaders.has(entry.sid))
    for (const entry of [...below, ...grouped]) {
      if (!this.#before.has(key(entry)) && entry.state !== 'Z') this.#seen.set(key(entry), entry)
    }
  }

  /** Every new process seen so far. */
  get seen(): ProcessEntry[] {
    return [...this.#seen.values()]
  }

  /** Stops watching, after one last look. */
  stop(): ProcessEntry[] {
    clearInterval(this.#timer)
    this.sample()
    return this.seen
  }
}

const key = (entry: ProcessEntry) => `${entry.pid}:${entry.start}`

/** Of `entries`, those still running that are not among `kept` (the processes the service keeps). */
export function leftBehind(entries: ProcessEntry[], kept: ProcessEntry[] = []): ProcessEntry[] {
  const keptKeys = new Set(kept.map(key))
  return entries.filter((entry) => !keptKeys.has(key(entry)) && running(entry))
}

/** A short account of processes for a failure message: pid, parent, group and state. */
export const describeProcesses = (entries: ProcessEntry[]): string =>
  entries
    .map((e) => `${e.pid} (ppid ${e.ppid}, pgid ${e.pgid}, sid ${e.sid}, ${e.state}, ${commandOf(e.pid)})`)
    .join(', ') || 'none'

/** The command line of a process, for messages only: processes are found by their ids, never by it. */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 80)
  } catch {
    return 'gone'
  }
}

/**
 * Ends, by their ids, the processes a run started that are still running: a test that found them left
 * behind must not leave them to the next test (nor keep a service's shutdown waiting on their pipes).
 */
export function killLeft(entries: ProcessEntry[], kept: ProcessEntry[] = []): void {
  for (const entry of leftBehind(entries, kept)) {
    try {
      process.kill(entry.pid, 'SIGKILL')
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * Waits up to `timeoutMs` for every process the watch saw to be gone but those the service keeps for the
 * programs in `folders` (one each at most: the suite's programs run one instance), and fails naming those
 * left. Whatever the outcome, ends the ones left, so that the next test starts clean.
 */
export async function assertNothingLeft(
  watch: ProcessWatch,
  servicePid: number,
  folders: string[] = [],
  timeoutMs = 5000,
): Promise<void> {
  const seen = watch.stop()
  const kept = () => folders.flatMap((folder) => programProcesses(servicePid, folder))
  const doubled = () => folders.filter((folder) => programProcesses(servicePid, folder).length > 1)
  try {
    await until(
      () => doubled().length === 0 && leftBehind(seen, kept()).length === 0,
      timeoutMs,
      () =>
        `processes left behind: ${describeProcesses(leftBehind(seen, kept()))}; ` +
        `more than one process for: ${doubled().join(', ') || 'none'}`,
    )
  } finally {
    killLeft(seen, kept())
  }
}

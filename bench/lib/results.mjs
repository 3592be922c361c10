// A benchmark script's last run, kept as data: bench/results/<name>.json holds the command, when and where it
// ran (date, commit, Node, machine) and its figures as tables and notes. The files are committed, and
// write-benchmarks-md.mjs writes BENCHMARKS.md from them.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os'
import { join } from 'node:path'

export const RESULTS = join(import.meta.dirname, '../results')

/** The machine a run is on, as a reader compares runs: the CPU, its cores, memory and the load average. */
export function machine() {
  const [cpu] = cpus()
  const memoryGiB = Math.round(totalmem() / 2 ** 30)
  const load = loadavg()[0].toFixed(1)
  return `${cpu?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} cores, ${memoryGiB} GiB; load ${load}`
}

/** The checkout's commit, marked when its files differ from it. */
function commit() {
  const git = (args) => execFileSync('git', args, { cwd: import.meta.dirname, encoding: 'utf8' }).trim()
  const changed = git(['status', '--porcelain', '--untracked-files=no']) !== ''
  return `${git(['rev-parse', '--short', 'HEAD'])}${changed ? ' with uncommitted changes' : ''}`
}

/** `command` as this run was started: preceded by those of the `settings` the environment gave it. */
export function commandLine(settings, command) {
  const set = settings.filter((name) => process.env[name] !== undefined)
  return [...set.map((name) => `${name}=${process.env[name]}`), command].join(' ')
}

/**
 * Writes bench/results/<name>.json from this run: `run` holds what the script knows (its title, script and
 * npm command, the exact command, the history page, tables and notes); the date, commit, Node and machine
 * are added here. RESULTS_DIR moves the file elsewhere (a trial run that should not replace the last one).
 */
export function writeResult(name, run) {
  const folder = process.env.RESULTS_DIR ?? RESULTS
  const result = {
    name,
    title: run.title,
    script: run.script,
    npm: run.npm,
    history: run.history,
    source: 'script',
    command: run.command,
    date: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    commit: commit(),
    node: process.version,
    machine: machine(),
    tables: run.tables ?? [],
    notes: run.notes ?? [],
  }
  mkdirSync(folder, { recursive: true })
  const file = join(folder, `${name}.json`)
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`)
  console.error(`results written to ${file}`)
}

/** Every results file of `folder`, by name. */
export function readResults(folder = RESULTS) {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => JSON.parse(readFileSync(join(folder, file), 'utf8')))
}

// From a shell script: `node bench/lib/results.mjs NAME < run.json` writes NAME's results file from the run
// (the fields writeResult takes).
if (process.argv[1] === import.meta.filename) {
  const name = process.argv[2]
  if (name === undefined) throw new Error('usage: node bench/lib/results.mjs NAME < run.json')
  writeResult(name, JSON.parse(readFileSync(0, 'utf8')))
}

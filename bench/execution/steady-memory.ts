// The service's memory under steady load of a module algorithm: examples/algorithms/collatz.mjs (n = 27,
// microseconds of work on a worker thread) called at full load for ROUNDS rounds of ROUND_S seconds,
// through POST /algorithms/Collatz/invoke and through jobs (POST /jobs, then GET /jobs/{id}?wait=30),
// each from a fresh service: the embedded store (one `serve`), then Redis (a redis-server of its own on a
// free port, never 6379; one `serve` and one `worker`). A closed loop of CONNECTIONS calls in flight, from
// this process with undici. After each round it prints the calls per second and the RSS of each process;
// a service that keeps something per call grows round after round. The requirement: RSS after the last
// round within 64 MB of RSS after the first.
// Usage: npm run bench:steady-memory   (= npx tsx bench/execution/steady-memory.ts; ROUNDS=4 ROUND_S=30
//        CONNECTIONS=64 KINDS=invoke,jobs BACKENDS=embedded,redis; REV=<git revision> measures that
//        revision, built in a worktree of its own, instead of this checkout)
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'

const ROUNDS = Number(process.env.ROUNDS ?? 4)
const ROUND_S = Number(process.env.ROUND_S ?? 30)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 64)
const KINDS = (process.env.KINDS ?? 'invoke,jobs').split(',')
const BACKENDS = (process.env.BACKENDS ?? 'embedded,redis').split(',')
const MAX_GROWTH_MB = 64

const root = join(import.meta.dirname, '../..')
const work = mkdtempSync(join(tmpdir(), 'algoserve-steady-memory-'))
const children: ChildProcess[] = []

/** The folder whose dist/main.js is measured: this checkout, or REV built in a worktree of its own. */
function checkout(): string {
  const rev = process.env.REV
  if (rev === undefined || rev === '') {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
    return root
  }
  const tree = join(work, 'tree')
  execFileSync('git', ['worktree', 'add', '--quiet', '--detach', tree, rev], { cwd: root, stdio: 'inherit' })
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'))
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: tree, stdio: 'inherit' })
  return tree
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  return port
}

function start(dir: string, args: string[], env: Record<string, string>, log: string): ChildProcess {
  const child = spawn('node', ['--max-semi-space-size=1', 'dist/main.js', ...args], {
    cwd: dir,
    env: { ...process.env, ALGOSERVE_ALGORITHMS: join(root, 'examples/algorithms/collatz.mjs'), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.push(child)
  child.once('exit', (code, signal) => {
    if (!stopping.has(child)) console.error(`${log} exited (${code ?? signal}) during the run`)
  })
  return child
}

const stopping = new Set<ChildProcess>()
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  stopping.add(child)
  child.kill('SIGTERM')
  await once(child, 'exit')
}

async function waitReady(url: string): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    const ok = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    )
    if (ok) return
    await sleep(20)
  }
  throw new Error(`no answer from ${url}/readyz`)
}

/** The resident memory of a process, in MB, from /proc. */
function rssMb(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1])
  return kb / 1024
}

const json = { 'content-type': 'application/json' }

async function invokeOnce(pool: Pool): Promise<void> {
  const { statusCode, body } = await pool.request({
    path: '/algorithms/Collatz/invoke',
    method: 'POST',
    headers: json,
    body: '{"n": 27}',
  })
  const text = await body.text()
  if (statusCode !== 200) throw new Error(`POST /algorithms/Collatz/invoke: ${statusCode} ${text}`)
}

async function jobOnce(pool: Pool): Promise<void> {
  const created = await pool.request({
    path: '/jobs',
    method: 'POST',
    headers: json,
    body: '{"algorithm": "Collatz", "params": {"n": 27}}',
  })
  const text = await created.body.text()
  if (created.statusCode !== 202) throw new Error(`POST /jobs: ${created.statusCode} ${text}`)
  const id = (JSON.parse(text) as { job_id: string }).job_id
  const read = await pool.request({ path: `/jobs/${id}?wait=30`, method: 'GET' })
  const job = (await read.body.json()) as { status: string }
  if (job.status !== 'completed') throw new Error(`job ${id} ended ${job.status}`)
}

/** Calls for `seconds` with CONNECTIONS calls in flight; returns the calls made. */
async function load(pool: Pool, call: (pool: Pool) => Promise<void>, seconds: number): Promise<number> {
  const end = Date.now() + seconds * 1000
  let calls = 0
  const caller = async () => {
    while (Date.now() < end) {
      await call(pool)
      calls++
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, caller))
  return calls
}

interface Measured {
  label: string
  rss: number[][]
}

/** One kind of call on one backend, from fresh processes: a line per round. */
async function measure(
  dir: string,
  backend: string,
  kind: string,
  redisUrl: string | undefined,
): Promise<Measured> {
  const port = await freePort()
  const env: Record<string, string> = { ALGOSERVE_DATA_DIR: join(work, `data-${backend}-${kind}`) }
  if (redisUrl !== undefined) {
    env.ALGOSERVE_REDIS_URL = redisUrl
    env.ALGOSERVE_REDIS_PREFIX = `steady-${kind}`
  }
  const processes = [start(dir, ['serve', '--port', String(port)], env, 'serve')]
  const workerPort = await freePort()
  if (redisUrl !== undefined)
    processes.push(start(dir, ['worker', '--worker-port', String(workerPort)], env, 'worker'))
  await waitReady(`http://127.0.0.1:${port}`)
  if (redisUrl !== undefined) await waitReady(`http://127.0.0.1:${workerPort}`)
  const names = redisUrl === undefined ? ['serve'] : ['serve', 'worker']
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONNECTIONS })
  const label = `${backend}, ${kind === 'invoke' ? 'POST /algorithms/Collatz/invoke' : 'jobs of Collatz'}`
  console.log(`## ${label}: ${CONNECTIONS} in flight, ${ROUNDS} rounds of ${ROUND_S} s`)
  const rss: number[][] = []
  for (let round = 1; round <= ROUNDS; round++) {
    const calls = await load(pool, kind === 'invoke' ? invokeOnce : jobOnce, ROUND_S)
    rss.push(processes.map(rssMb))
    const figures = names.map((name, i) => `${name} RSS ${(rss.at(-1)?.[i] ?? 0).toFixed(0)} MB`).join(', ')
    console.log(`round ${round}: ${(calls / ROUND_S).toFixed(0)} calls/s; ${figures}`)
  }
  await pool.close()
  for (const child of processes) await stop(child)
  return { label, rss }
}

function redisAnswers(port: number): boolean {
  try {
    return execFileSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).trim() === 'PONG'
  } catch {
    return false
  }
}

const results: Measured[] = []
let redis: ChildProcess | undefined
try {
  const dir = checkout()
  console.log(`steady memory of ${process.env.REV || 'this checkout'} on Node ${process.version}`)
  for (const backend of BACKENDS) {
    let redisUrl: string | undefined
    if (backend === 'redis') {
      const port = await freePort()
      redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', ''], {
        cwd: work,
        stdio: 'ignore',
      })
      redisUrl = `redis://127.0.0.1:${port}`
      for (let tries = 0; tries < 100 && !redisAnswers(port); tries++) await sleep(50)
    }
    for (const kind of KINDS) results.push(await measure(dir, backend, kind, redisUrl))
    if (redis !== undefined) await stop(redis)
  }
  console.log()
  console.log('| calls | process | RSS after round 1, MB | after the last | growth |')
  console.log('|---|---|---|---|---|')
  let failed = false
  for (const { label, rss } of results) {
    const names = label.startsWith('redis') ? ['serve', 'worker'] : ['serve']
    names.forEach((name, i) => {
      const first = rss[0]?.[i] ?? 0
      const last = rss.at(-1)?.[i] ?? 0
      failed ||= last - first > MAX_GROWTH_MB
      console.log(
        `| ${label} | ${name} | ${first.toFixed(0)} | ${last.toFixed(0)} | ${(last - first).toFixed(0)} |`,
      )
    })
  }
  console.log(
    failed ? `\nFAIL: RSS grew by more than ${MAX_GROWTH_MB} MB` : `\nRSS within ${MAX_GROWTH_MB} MB`,
  )
  process.exitCode = failed ? 1 : 0
} finally {
  for (const child of children) await stop(child)
  if (redis !== undefined) await stop(redis)
  if (process.env.REV)
    execFileSync('git', ['worktree', 'remove', '--force', join(work, 'tree')], { cwd: root })
  rmSync(work, { recursive: true, force: true })
}

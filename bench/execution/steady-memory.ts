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
import { type ChildProcess, execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { otherCheckout } from '../lib/checkout.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { type RedisServer, startRedis } from '../lib/redis.js'
import { freePort, ROOT, startService } from '../lib/service.js'

writeResultOnExit(
  'steady-memory',
  {
    title: 'memory under steady load of a module algorithm',
    script: 'bench/execution/steady-memory.ts',
    npm: 'npm run bench:steady-memory',
    history: 'docs/benchmarks/algorithms.md',
    command: 'npx tsx bench/execution/steady-memory.ts',
  },
  ['BACKENDS', 'CONNECTIONS', 'KINDS', 'REV', 'ROUNDS', 'ROUND_S'],
)

const ROUNDS = Number(process.env.ROUNDS ?? 4)
const ROUND_S = Number(process.env.ROUND_S ?? 30)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 64)
const KINDS = (process.env.KINDS ?? 'invoke,jobs').split(',')
const BACKENDS = (process.env.BACKENDS ?? 'embedded,redis').split(',')
const MAX_GROWTH_MB = 64

const work = mkdtempSync(join(tmpdir(), 'algoserve-steady-memory-'))
const children: ChildProcess[] = []

/** The checkout whose dist/main.js is measured: this one, or REV built in a worktree of its own. */
function checkout(): { path: string; remove(): void } {
  const rev = process.env.REV
  if (rev !== undefined && rev !== '') return otherCheckout(rev)
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' })
  return { path: ROOT, remove: () => {} }
}

/** Starts `algoserve ROLE` from the build in `dir`, with npm start's flag, and waits until it is ready. */
async function start(
  dir: string,
  role: 'serve' | 'worker',
  env: Record<string, string>,
  port?: number,
): Promise<ChildProcess> {
  const { child } = await startService({
    checkout: dir,
    role,
    nodeFlags: ['--max-semi-space-size=1'],
    env: { ALGOSERVE_ALGORITHMS: join(ROOT, 'examples/algorithms/collatz.mjs'), ...env },
    port,
    everyMs: 20,
  })
  children.push(child)
  child.once('exit', (code, signal) => {
    if (!stopping.has(child)) console.error(`${role} exited (${code ?? signal}) during the run`)
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
  const roles = redisUrl === undefined ? (['serve'] as const) : (['serve', 'worker'] as const)
  const processes = await Promise.all(
    roles.map((role) => start(dir, role, env, role === 'serve' ? port : undefined)),
  )
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

const results: Measured[] = []
let redis: RedisServer | undefined
const measured = checkout()
try {
  const dir = measured.path
  console.log(`steady memory of ${process.env.REV || 'this checkout'} on Node ${process.version}`)
  for (const backend of BACKENDS) {
    let redisUrl: string | undefined
    if (backend === 'redis') {
      redis = await startRedis(['--appendonly', 'no'])
      redisUrl = redis.url
    }
    for (const kind of KINDS) results.push(await measure(dir, backend, kind, redisUrl))
    await redis?.close()
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
  await redis?.close()
  measured.remove()
  rmSync(work, { recursive: true, force: true })
}

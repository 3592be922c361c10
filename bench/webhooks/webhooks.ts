// Webhooks at a fixed rate of jobs: POST /jobs at RATE a second for DURATION seconds, every job with the
// same webhook URL, to a local receiver that answers 204 after LATENCY_MS; then waits for every webhook.
// Reports the jobs' rate (created, and ended per their completed_at), the webhooks' rate, the delay from
// each job's completed_at to its webhook's arrival (p50, p99, max) and the receiver's most requests in
// flight; on the embedded store and on Redis (one API, one worker). Each tree named in TREES (this one
// by default; e.g. `TREES=.,../main-tree`) is started from its own sources, in turn, in the same run.
//
//   npm run bench:webhooks   (RATE=1000 DURATION=10 LATENCY_MS=0 BACKENDS=embedded,redis TREES=.)
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'
import { freePort, startRedis } from '../../test/helpers/redis.js'

const RATE = Number(process.env.RATE ?? 1000)
const DURATION_S = Number(process.env.DURATION ?? 10)
const LATENCY_MS = Number(process.env.LATENCY_MS ?? 0)
const BACKENDS = (process.env.BACKENDS ?? 'embedded,redis').split(',')
const TREES = (process.env.TREES ?? '.').split(',').map((tree) => resolve(tree))
/** How long after the last job is posted the webhooks may take to arrive. */
const DRAIN_S = Number(process.env.DRAIN ?? 60)

interface Arrival {
  completedAt: number
  at: number
}

async function startReceiver() {
  const arrivals = new Map<string, Arrival>()
  let inFlight = 0
  let most = 0
  const server = createServer((request, response) => {
    inFlight++
    most = Math.max(most, inFlight)
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => {
      body += chunk
    })
    request.on('end', () => {
      const at = Date.now()
      const { job_id, completed_at } = JSON.parse(body) as { job_id: string; completed_at: string }
      arrivals.set(job_id, { completedAt: Date.parse(completed_at), at })
      const answer = () => {
        inFlight--
        response.writeHead(204).end()
      }
      if (LATENCY_MS > 0) setTimeout(answer, LATENCY_MS)
      else answer()
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    get most() {
      return most
    },
    close: () => new Promise((resolve) => server.close(resolve)).then(() => server.closeAllConnections()),
  }
}

/** Starts `algoserve ROLE` from `tree`'s sources and waits until it is ready. */
async function startProcess(
  tree: string,
  role: 'serve' | 'worker',
  env: Record<string, string>,
  readyPort: number,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', role], {
    cwd: tree,
    env: { ...process.env, ALGOSERVE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const deadline = Date.now() + 60_000
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${readyPort}/readyz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ready) return child
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${role} in ${tree} did not start`)
    await sleep(200)
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number)

async function run(tree: string, backend: string) {
  const receiver = await startReceiver()
  const dataDir = mkdtempSync(join(tmpdir(), 'algoserve-bench-'))
  const port = await freePort()
  const children: ChildProcess[] = []
  const redis = backend === 'redis' ? await startRedis() : undefined
  const common = {
    ALGOSERVE_DATA_DIR: dataDir,
    ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'true',
    ALGOSERVE_MAX_PENDING_JOBS: '1000000',
    ALGOSERVE_DRAIN_DELAY_MS: '0',
    ...(redis === undefined ? {} : { ALGOSERVE_REDIS_URL: redis.url }),
  }
  try {
    children.push(await startProcess(tree, 'serve', { ...common, ALGOSERVE_PORT: String(port) }, port))
    if (redis !== undefined) {
      const workerPort = await freePort()
      children.push(
        await startProcess(
          tree,
          'worker',
          { ...common, ALGOSERVE_WORKER_PORT: String(workerPort) },
          workerPort,
        ),
      )
    }
    const api = new Pool(`http://127.0.0.1:${port}`, { connections: 32 })
    const total = RATE * DURATION_S
    const posted: Promise<void>[] = []
    const start = Date.now()
    let failures = 0
    for (let sent = 0; sent < total; ) {
      // Open loop: as many as are due by now, whatever the answers do.
      const due = Math.min(total, Math.floor(((Date.now() - start) / 1000) * RATE) + 1)
      for (; sent < due; sent++) {
        const body = JSON.stringify({
          algorithm: 'PrimeChecker',
          params: { number: sent },
          webhook: receiver.url,
        })
        posted.push(
          api
            .request({ path: '/jobs', method: 'POST', headers: { 'content-type': 'application/json' }, body })
            .then(async (answer) => {
              await answer.body.dump()
              if (answer.statusCode !== 202) failures++
            })
            .catch(() => {
              failures++
            }),
        )
      }
      await sleep(5)
    }
    await Promise.all(posted)
    const postedIn = (Date.now() - start) / 1000
    const deadline = Date.now() + DRAIN_S * 1000
    while (receiver.arrivals.size < total - failures && Date.now() < deadline) await sleep(100)
    await api.close()
    const arrivals = [...receiver.arrivals.values()]
    const delays = arrivals.map((a) => a.at - a.completedAt).sort((a, b) => a - b)
    const ends = arrivals.map((a) => a.completedAt).sort((a, b) => a - b)
    const ats = arrivals.map((a) => a.at).sort((a, b) => a - b)
    const span = (xs: number[]) => ((xs.at(-1) ?? 0) - (xs[0] ?? 0)) / 1000
    return {
      tree,
      backend,
      posted: total - failures,
      refused: failures,
      'jobs/s posted': Math.round((total - failures) / postedIn),
      'jobs/s ended': Math.round(ends.length / span(ends)),
      webhooks: arrivals.length,
      'webhooks/s': Math.round(arrivals.length / span(ats)),
      'delay p50 ms': percentile(delays, 0.5),
      'delay p99 ms': percentile(delays, 0.99),
      'delay max ms': delays.at(-1) ?? Number.NaN,
      'most in flight': receiver.most,
    }
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await Promise.all(
      children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)),
    )
    await redis?.close()
    await receiver.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

console.log(`RATE=${RATE} DURATION=${DURATION_S} LATENCY_MS=${LATENCY_MS} node ${process.version}`)
const results = []
for (const backend of BACKENDS) {
  for (const tree of TREES) {
    const result = await run(tree, backend)
    console.log(JSON.stringify(result))
    results.push(result)
  }
}
console.table(results)

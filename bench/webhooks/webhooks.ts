// Webhooks at a fixed rate of jobs: POST /jobs at RATE a second for DURATION seconds, every job with the
// same webhook URL, to a local receiver that answers 204 after LATENCY_MS; then waits up to DRAIN seconds
// for every webhook. The receiver (receiver.ts) and the client posting the jobs (poster.ts) each run in
// a process of their own, so that neither shares an event loop with the other. Reports the jobs' rate
// (posted, and ended per their completed_at), the webhooks' rate, the delay from each job's completed_at
// to its webhook's arrival (p50, p99, max), the receiver's most requests in flight, and the service's
// CPU per job (each process's, from the poster's start to the last webhook); on the embedded store and
// on Redis (one API, one worker).
//
// BAD=N adds N jobs whose webhook goes to a black hole (reads the request, never answers) and N to a
// receiver answering 500, spread over the run: it then reports how many attempts each 500 webhook got
// and the gaps between them (the contract's 1, 5 and 15 s), and waits for those too.
//
// Each tree named in TREES (this one by default; e.g. `TREES=.,../main-tree`) is started from its own
// sources, in turn, in the same run; the receivers and the poster are always this tree's. Each process
// gets the node flags its npm script gives it (`npm start`'s 1 MB young generation for `serve`, none for
// `npm run worker`), then SERVICE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
//
// The delay's p99 is given twice: over every webhook, and over those of the jobs that ended after the
// first WARMUP seconds, once the service's processes are warm. TIMELINE=1 also prints, for each second of
// job ends, its webhooks and their delay's p50, p99 and max.
//
//   npm run bench:webhooks   (RATE=1000 DURATION=10 LATENCY_MS=0 BAD=0 BACKENDS=embedded,redis TREES=.
//                             DRAIN=60 WARMUP=3 SERVICE_FLAGS= TIMELINE=)
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { startRedis } from '../lib/redis.js'
import { freePort, startService } from '../lib/service.js'
import { percentile, upperMedian } from '../lib/stats.js'
import type { PosterReport } from './poster.js'
import type { ReceiverReport } from './receiver.js'

writeResultOnExit(
  'webhooks',
  {
    title: 'webhooks at a fixed rate of jobs',
    script: 'bench/webhooks/webhooks.ts',
    npm: 'npm run bench:webhooks',
    history: 'docs/benchmarks/webhooks.md',
    command: 'npx tsx bench/webhooks/webhooks.ts',
  },
  [
    'BACKENDS',
    'BAD',
    'DRAIN',
    'DURATION',
    'LATENCY_MS',
    'RATE',
    'SERVICE_FLAGS',
    'TIMELINE',
    'TREES',
    'WARMUP',
  ],
)

const RATE = Number(process.env.RATE ?? 1000)
const DURATION_S = Number(process.env.DURATION ?? 10)
const LATENCY_MS = Number(process.env.LATENCY_MS ?? 0)
const BAD = Number(process.env.BAD ?? 0)
const BACKENDS = (process.env.BACKENDS ?? 'embedded,redis').split(',')
const TREES = (process.env.TREES ?? '.').split(',').map((tree) => resolve(tree))
/** How long after the last job is posted the webhooks may take to arrive. */
const DRAIN_S = Number(process.env.DRAIN ?? 60)
/** The first seconds of jobs, left out of a second p99: a process's cold start (JIT, connections). */
const WARMUP_S = Number(process.env.WARMUP ?? 3)
const TIMELINE = process.env.TIMELINE === '1'
const SERVICE_FLAGS = (process.env.SERVICE_FLAGS ?? '').split(' ').filter((flag) => flag !== '')
const BENCH = import.meta.dirname
/** The node flags of `npm start` and `npm run worker`. */
const ROLE_FLAGS = { serve: ['--max-semi-space-size=1'], worker: [] }

/** A child running one of this folder's scripts, and the first line it prints, as JSON. */
async function startScript<T>(
  script: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; line: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(BENCH, script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  for await (const line of lines) return { child, line: JSON.parse(line) as T }
  throw new Error(`${script} ended without a word`)
}

interface Receiver {
  url: string
  ask<T>(question: 'count' | 'report'): Promise<T>
  child: ChildProcess
}

async function startReceiver(kind: 'ok' | 'error' | 'blackhole'): Promise<Receiver> {
  const { child, line } = await startScript<{ port: number }>('receiver.ts', {
    KIND: kind,
    LATENCY_MS: String(LATENCY_MS),
  })
  return {
    url: `http://127.0.0.1:${line.port}/hook`,
    child,
    ask: <T>(question: 'count' | 'report') =>
      new Promise<T>((resolve) => {
        child.once('message', (answer) => resolve(answer as T))
        child.send(question)
      }),
  }
}

/** Starts `algoserve ROLE` from `tree`'s sources and waits until it is ready. */
async function startProcess(
  tree: string,
  role: 'serve' | 'worker',
  env: Record<string, string>,
  port?: number,
): Promise<ChildProcess> {
  const nodeFlags = [...ROLE_FLAGS[role], ...SERVICE_FLAGS]
  const options = { checkout: tree, from: 'src', role, nodeFlags, port, everyMs: 200 } as const
  return (await startService({ ...options, env: { ALGOSERVE_LOG_LEVEL: 'warn', ...env } })).child
}

/** CPU time a process has used so far, in ms (Linux's /proc: user and system ticks of 10 ms). */
function cpuMs(child: ChildProcess): number {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) * 10
}

// NaN rather than the shared functions' error for no values: a run where some webhooks never came still
// prints its other figures.
const percentileOrNaN = (xs: number[], p: number) => (xs.length === 0 ? Number.NaN : percentile(xs, p))
const medianOrNaN = (xs: number[]) => (xs.length === 0 ? Number.NaN : upperMedian(xs))
const exit = (child: ChildProcess) =>
  child.exitCode === null && child.signalCode === null ? new Promise((r) => child.once('exit', r)) : null

/** For each second of job ends from `start`: its webhooks, and their delay's p50, p99 and max (ms). */
function printTimeline(webhooks: number[][], start: number): void {
  const seconds: number[][] = []
  for (const [end = 0, at = 0] of webhooks) {
    const second = Math.floor((end - start) / 1000)
    const delays = seconds[second] ?? []
    delays.push(at - end)
    seconds[second] = delays
  }
  for (const [second, delays = []] of seconds.entries()) {
    delays.sort((a, b) => a - b)
    const [p50, p99] = [0.5, 0.99].map((p) => percentileOrNaN(delays, p))
    console.log(
      `  second ${second}: ${delays.length} webhooks, delay p50 ${p50} p99 ${p99} max ${delays.at(-1)} ms`,
    )
  }
}

async function run(tree: string, backend: string) {
  const receiver = await startReceiver('ok')
  const failing = BAD > 0 ? await startReceiver('error') : undefined
  const blackhole = BAD > 0 ? await startReceiver('blackhole') : undefined
  const receivers = [receiver, failing, blackhole].filter((r) => r !== undefined)
  const dataDir = mkdtempSync(join(tmpdir(), 'algoserve-bench-'))
  const port = await freePort()
  const services: ChildProcess[] = []
  const redis = backend === 'redis' ? await startRedis() : undefined
  const common = {
    ALGOSERVE_DATA_DIR: dataDir,
    ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'true',
    ALGOSERVE_MAX_PENDING_JOBS: '1000000',
    ALGOSERVE_DRAIN_DELAY_MS: '0',
    ...(redis === undefined ? {} : { ALGOSERVE_REDIS_URL: redis.url }),
  }
  try {
    services.push(await startProcess(tree, 'serve', common, port))
    if (redis !== undefined) services.push(await startProcess(tree, 'worker', common))
    const cpuBefore = services.map(cpuMs)
    const { child: poster, line: posted } = await startScript<PosterReport>('poster.ts', {
      API: `http://127.0.0.1:${port}`,
      RATE: String(RATE),
      DURATION: String(DURATION_S),
      HOOK: receiver.url,
      EXTRA: JSON.stringify([failing, blackhole].flatMap((r) => (r === undefined ? [] : [r.url]))),
      EXTRA_JOBS: String(BAD),
    })
    await exit(poster)
    const accepted = posted.accepted[receiver.url] ?? 0
    const failingAccepted = failing === undefined ? 0 : (posted.accepted[failing.url] ?? 0)
    const deadline = Date.now() + DRAIN_S * 1000
    for (;;) {
      const arrived = await receiver.ask<{ webhooks: number }>('count')
      // Every 500 webhook is attempted once and retried three times.
      const failed = (await failing?.ask<{ attempts: number }>('count'))?.attempts ?? 0
      if ((arrived.webhooks >= accepted && failed >= 4 * failingAccepted) || Date.now() > deadline) break
      await sleep(100)
    }
    const cpuPerJob = services.map((service, i) => (cpuMs(service) - (cpuBefore[i] as number)) / accepted)
    const report = await receiver.ask<ReceiverReport>('report')
    const delays = report.webhooks.map(([end, at]) => (at as number) - (end as number)).sort((a, b) => a - b)
    const ends = report.webhooks.map(([end]) => end as number).sort((a, b) => a - b)
    const warm = (ends[0] ?? 0) + WARMUP_S * 1000
    const warmDelays = report.webhooks.flatMap(([end, at]) =>
      (end as number) >= warm ? [(at as number) - (end as number)] : [],
    )
    if (TIMELINE) printTimeline(report.webhooks, ends[0] ?? 0)
    const ats = report.webhooks.map(([, at]) => at as number).sort((a, b) => a - b)
    const span = (xs: number[]) => ((xs.at(-1) ?? 0) - (xs[0] ?? 0)) / 1000
    const refused = Object.values(posted.refused).reduce((a, b) => a + b, 0)
    const result: Record<string, string | number> = {
      tree,
      backend,
      posted: accepted,
      refused,
      'jobs/s posted': Math.round(accepted / posted.seconds),
      'jobs/s ended': Math.round(ends.length / span(ends)),
      webhooks: report.webhooks.length,
      'webhooks/s': Math.round(report.webhooks.length / span(ats)),
      'delay p50 ms': percentileOrNaN(delays, 0.5),
      'delay p99 ms': percentileOrNaN(delays, 0.99),
      'delay max ms': delays.at(-1) ?? Number.NaN,
      [`delay p99 ms after ${WARMUP_S} s`]: percentileOrNaN(warmDelays, 0.99),
      'most in flight': report.most,
      'CPU ms/job': cpuPerJob.map((ms) => ms.toFixed(3)).join(' + '),
      'poster most behind ms': posted.mostBehindMs,
    }
    if (failing !== undefined && blackhole !== undefined) {
      const failed = await failing.ask<ReceiverReport>('report')
      const counts = new Map<number, number>()
      for (const [, ...attempts] of failed.webhooks)
        counts.set(attempts.length, (counts.get(attempts.length) ?? 0) + 1)
      result['500: webhooks×attempts'] = [...counts].map(([attempts, n]) => `${n}×${attempts}`).join(' ')
      // The median of each gap between attempts, and the least and most of any, in s.
      const gaps = [1, 2, 3].map((i) =>
        failed.webhooks.flatMap(([, ...at]) =>
          at[i] === undefined ? [] : [((at[i] as number) - (at[i - 1] as number)) / 1000],
        ),
      )
      result['500: gaps s (median)'] = gaps.map((g) => medianOrNaN(g).toFixed(2)).join(' / ')
      result['500: gaps s (range)'] = gaps
        .map((g) => `${Math.min(...g).toFixed(2)}-${Math.max(...g).toFixed(2)}`)
        .join(' / ')
      const held = await blackhole.ask<ReceiverReport>('report')
      result['black hole: webhooks, attempts'] =
        `${held.webhooks.length}, ${held.webhooks.reduce((n, [, ...at]) => n + at.length, 0)}`
    }
    return result
  } finally {
    for (const child of services) child.kill('SIGTERM')
    await Promise.all(services.map(exit))
    await redis?.close()
    for (const r of receivers) r.child.kill('SIGTERM')
    await Promise.all(receivers.map((r) => exit(r.child)))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

console.log(`RATE=${RATE} DURATION=${DURATION_S} LATENCY_MS=${LATENCY_MS} BAD=${BAD} node ${process.version}`)
const results = []
for (const backend of BACKENDS) {
  for (const tree of TREES) {
    const result = await run(tree, backend)
    console.log(JSON.stringify(result))
    results.push(result)
  }
}
console.table(results)

// Job progress and GET /jobs/{job_id}/events against the event-stream targets, on one backend
// (BACKEND=embedded|redis; redis starts a redis-server of its own). The service runs in a child process
// (events-server.ts) with the process algorithm of bench/jobs/progress-process.
//
// 1. Speed: a job doing about a second of CPU work, reporting after each ~1 ms unit (about 1,000 updates
//    a second) against the same job reporting nothing, alternating, ROUNDS each: the ratio of the medians
//    of their run times (metadata.elapsed_time). Target: at least 0.95.
// 2. Redis writes (BACKEND=redis): write calls (EVALSHA: BullMQ writes through scripts) Redis took during
//    a job of TICK_S seconds reporting every millisecond, less those during the same job reporting nothing,
//    per second. Target: at most 5.
// 3. Streams: 4 jobs reporting their clock every 300 ms, CLIENTS streams spread over them; the server's
//    RSS before and with the streams, and how long after its report each progress event arrived.
//    Targets: under 50 MB added; every event within 100 ms (embedded) or 250 ms (Redis).
//
// `node --import tsx bench/jobs/events.ts` (npm run bench:job-events); ROUNDS, TICK_S, CLIENTS, WATCH_S.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { freshPrefix, startRedis } from '../lib/redis.js'
import { percentile, upperMedian } from '../lib/stats.js'

writeResultOnExit(
  'job-events',
  {
    title: 'job progress and event streams',
    script: 'bench/jobs/events.ts',
    npm: 'npm run bench:job-events',
    history: 'docs/benchmarks/job-control.md',
    command: 'node --import tsx bench/jobs/events.ts',
  },
  ['BACKEND', 'CLIENTS', 'ROUNDS', 'TICK_S', 'WATCH_S'],
)

const BACKEND = process.env.BACKEND ?? 'embedded'
const ROUNDS = Number(process.env.ROUNDS ?? 7)
const TICK_S = Number(process.env.TICK_S ?? 5)
const CLIENTS = Number(process.env.CLIENTS ?? 1000)
const WATCH_S = Number(process.env.WATCH_S ?? 10)

const redis = BACKEND === 'redis' ? await startRedis() : undefined
const child = spawn(process.execPath, ['--import', 'tsx', 'bench/jobs/events-server.ts'], {
  env: { ...process.env, REDIS_URL: redis?.url ?? '', REDIS_PREFIX: freshPrefix() },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const base = await new Promise<string>((resolve) =>
  child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())),
)
const rssMb = () =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024

async function submit(params: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${base}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ algorithm: 'ProgressBench', params }),
  })
  return ((await response.json()) as { job_id: string }).job_id
}

async function ended(id: string): Promise<Record<string, unknown>> {
  for (;;) {
    const job = (await (await fetch(`${base}/jobs/${id}?wait=30`)).json()) as Record<string, unknown>
    if (job.status === 'completed' || job.status === 'failed') return job
  }
}

console.log(
  `backend ${BACKEND}; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
)

// 1. Speed with and without ~1,000 updates a second.
const runTime = async (report: boolean) => {
  const job = await ended(await submit({ mode: 'busy', units: 1000, report }))
  return (job.metadata as { elapsed_time: number }).elapsed_time
}
await runTime(false)
await runTime(true)
const quiet: number[] = []
const reporting: number[] = []
for (let round = 0; round < ROUNDS; round++) {
  quiet.push(await runTime(false))
  reporting.push(await runTime(true))
}
console.log(
  `speed: median ${upperMedian(quiet).toFixed(3)} s without progress, ${upperMedian(reporting).toFixed(3)} s with ` +
    `1,000 units reported (${(1000 / upperMedian(reporting)).toFixed(0)} updates a second); ratio ` +
    `${(upperMedian(quiet) / upperMedian(reporting)).toFixed(3)} (target >= 0.95)`,
)

// 2. Redis commands a second for a job reporting every millisecond, over the same job reporting nothing.
if (redis !== undefined) {
  const client = new Redis(redis.url)
  // INFO commandstats counts the commands a script runs too: a progress update is one EVALSHA (BullMQ's
  // updateProgress: HSET and XADD inside), read by each process's QueueEvents with an XREAD.
  const stats = async () =>
    new Map(
      [...(await client.info('commandstats')).matchAll(/cmdstat_(\w+):calls=(\d+)/g)].map(
        (match) => [match[1] as string, Number(match[2])] as const,
      ),
    )
  const during = async (params: Record<string, unknown>) => {
    const before = await stats()
    const job = await ended(await submit(params))
    const after = await stats()
    const more = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0)
    const all = [...after.keys()].reduce((sum, name) => sum + more(name), 0)
    return {
      scripts: more('evalsha'),
      reads: more('xread'),
      all,
      reports: (job.result as { reports: number }).reports,
    }
  }
  // Alternating, three of each: BullMQ's own periodic commands (lock renewals, stalled checks) vary.
  const plain: Awaited<ReturnType<typeof during>>[] = []
  const ticking: Awaited<ReturnType<typeof during>>[] = []
  for (let round = 0; round < 3; round++) {
    plain.push(await during({ mode: 'tick', duration_ms: TICK_S * 1000 }))
    ticking.push(await during({ mode: 'tick', duration_ms: TICK_S * 1000, every_ms: 1 }))
  }
  const perSecond = (key: 'scripts' | 'reads' | 'all') =>
    (
      (upperMedian(ticking.map((run) => run[key])) - upperMedian(plain.map((run) => run[key]))) /
      TICK_S
    ).toFixed(1)
  console.log(
    `Redis, a ${TICK_S} s job reporting ${upperMedian(ticking.map((run) => run.reports))} times against one ` +
      `reporting nothing: ${perSecond('scripts')} more write calls (EVALSHA) a second (target <= 5), ` +
      `${perSecond('reads')} more XREADs, ${perSecond('all')} more commands counting those inside scripts`,
  )
  client.disconnect()
}

// 3. CLIENTS streams over 4 jobs reporting their clock every 300 ms.
const watched = await Promise.all(
  Array.from({ length: 4 }, () =>
    submit({ mode: 'tick', duration_ms: (WATCH_S + 30) * 1000, every_ms: 300 }),
  ),
)
await sleep(3000)
const rssBefore = rssMb()
const delays: number[] = []
let measuring = false
let opened = 0
const streams = watched.flatMap((id, j) =>
  Array.from({ length: Math.ceil(CLIENTS / watched.length) }, (_, i) => i * watched.length + j)
    .filter((n) => n < CLIENTS)
    .map(() => {
      const req = request(`${base}/jobs/${id}/events`, (res) => {
        opened++
        res.setEncoding('utf8')
        let buffer = ''
        res.on('data', (chunk: string) => {
          const received = Date.now()
          buffer += chunk
          let end = buffer.indexOf('\n\n')
          while (end !== -1) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            end = buffer.indexOf('\n\n')
            if (!measuring || !block.includes('event: progress')) continue
            const data = JSON.parse(block.slice(block.indexOf('data: ') + 6)) as { message: string }
            delays.push(received - Number(data.message))
          }
        })
      })
      req.on('error', () => {})
      req.end()
      return req
    }),
)
while (opened < CLIENTS) await sleep(100)
await sleep(3000)
const rssWith = rssMb()
measuring = true
await sleep(WATCH_S * 1000)
measuring = false
console.log(
  `streams: ${opened} open; server RSS ${rssBefore.toFixed(1)} MB before, ${rssWith.toFixed(1)} MB with them ` +
    `(+${(rssWith - rssBefore).toFixed(1)} MB, target < 50)`,
)
console.log(
  `event delays after each report, ${delays.length} events over ${WATCH_S} s: median ${upperMedian(delays)} ms, ` +
    `p99 ${percentile(delays, 0.99)} ms, max ${Math.max(...delays)} ms ` +
    `(target: every one within ${BACKEND === 'redis' ? 250 : 100} ms)`,
)
for (const stream of streams) stream.destroy()
for (const id of watched) await fetch(`${base}/jobs/${id}/cancel`, { method: 'POST' })
child.kill('SIGTERM')
await new Promise((resolve) => child.once('exit', resolve))
await redis?.close()

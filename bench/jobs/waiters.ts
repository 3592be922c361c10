// 1,000 clients waiting on jobs at once (GET /jobs/{job_id}?wait=60; the target: under 50 MB and
// no measurable CPU while idle). The service runs in a child process (waiters-server.ts) whose jobs
// never run; its RSS (/proc VmRSS) and CPU time (/proc utime+stime) are read from outside:
// idle for IDLE_S seconds with no waits (the baseline), then with WAITERS waits held, same length.
// `node --import tsx bench/jobs/waiters.ts`; BACKEND=redis starts a redis-server of its own.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { freshPrefix, startRedis } from '../lib/redis.js'

writeResultOnExit(
  'waiters',
  {
    title: '1,000 held waits',
    script: 'bench/jobs/waiters.ts',
    history: 'docs/benchmarks/job-control.md',
    command: 'node --import tsx bench/jobs/waiters.ts',
  },
  ['BACKEND', 'IDLE_S', 'WAITERS'],
)

const WAITERS = Number(process.env.WAITERS ?? 1000)
const IDLE_S = Number(process.env.IDLE_S ?? 10)
const BACKEND = process.env.BACKEND ?? 'embedded'
const TICKS = 100 // USER_HZ on Linux

const redis = BACKEND === 'redis' ? await startRedis() : undefined
const child = spawn(process.execPath, ['--import', 'tsx', 'bench/jobs/waiters-server.ts'], {
  env: { ...process.env, REDIS_URL: redis?.url ?? '', REDIS_PREFIX: freshPrefix() },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const base = await new Promise<string>((resolve) =>
  child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())),
)
const pid = child.pid as number

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024
const cpuMs = () => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS
}

async function post(path: string, body: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
  return (await response.json()) as Record<string, unknown>
}

// Jobs that are never run; the same HTTP paths are warmed before the baseline.
const ids: string[] = []
for (let i = 0; i < WAITERS; i++) {
  ids.push((await post('/jobs', '{"algorithm":"PrimeChecker","params":{"number":97}}')).job_id as string)
}
for (const id of ids.slice(0, 50)) await (await fetch(`${base}/jobs/${id}?wait=0.01`)).arrayBuffer()
await sleep(2000)

async function idle(label: string): Promise<{ rss: number; cpu: number }> {
  const cpu0 = cpuMs()
  await sleep(IDLE_S * 1000)
  const cpu = cpuMs() - cpu0
  const rss = rssMb()
  console.log(`${label.padEnd(28)} RSS ${rss.toFixed(1)} MB, CPU ${cpu.toFixed(0)} ms over ${IDLE_S} s idle`)
  return { rss, cpu }
}

const before = await idle('no waits held')
const held = ids.map(
  (id) =>
    new Promise<number>((resolve) => {
      const req = request(`${base}/jobs/${id}?wait=60`, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('error', () => resolve(0))
      req.end()
    }),
)
await sleep(3000)
const during = await idle(`${WAITERS} waits held`)
// CPU ms over IDLE_S s as a share of one core: ms / (IDLE_S * 1000) * 100.
const share = (ms: number) => `${(ms / IDLE_S / 10).toFixed(2)}%`
console.log(
  `difference: RSS +${(during.rss - before.rss).toFixed(1)} MB; idle CPU ${share(during.cpu)} of a core ` +
    `with the waits, ${share(before.cpu)} without`,
)
child.kill('SIGTERM')
await Promise.race([Promise.all(held), sleep(5000)])
await redis?.close()
process.exit(0)

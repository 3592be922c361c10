// A rolling upgrade on Redis under load (the target: 0 jobs lost, every job on its pinned version). An API
// of Adder 1.0.0 and an API of 1.0.0 and 1.1.0 (whose default is 1.1.0) create jobs at RATE a second in
// all, half each; WORKERS workers of 1.0.0 are replaced one by one by workers of both versions (each new
// one started, STEP_S later the old one stopped with SIGTERM, STEP_S later the next). Each run sleeps
// RUN_MS. Then every job is waited for: lost is a job not ended WAIT_S after the load stopped; wrong, one
// that ended on another version than its pin (metadata.version); the run fails with either. Latency is
// created_at to completed_at; a job pinned to 1.1.0 waits for the first worker that has it.
// `node --import tsx bench/jobs/rolling-upgrade.ts`; it starts a redis-server of its own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { freshPrefix, startRedis } from '../lib/redis.js'
import { type StartedService, startService } from '../lib/service.js'
import { percentile } from '../lib/stats.js'

writeResultOnExit(
  'rolling-upgrade',
  {
    title: 'A rolling upgrade of the workers on Redis',
    script: 'bench/jobs/rolling-upgrade.ts',
    history: 'docs/benchmarks/redis.md',
    command: 'node --import tsx bench/jobs/rolling-upgrade.ts',
  },
  ['RATE', 'WORKERS', 'STEP_S', 'RUN_MS', 'WAIT_S'],
)

const RATE = Number(process.env.RATE ?? 100)
const WORKERS = Number(process.env.WORKERS ?? 3)
const STEP_S = Number(process.env.STEP_S ?? 4)
const RUN_MS = Number(process.env.RUN_MS ?? 20)
const WAIT_S = Number(process.env.WAIT_S ?? 60)

const adder = (version: string) => `export default {
  name: 'Adder',
  version: '${version}',
  description: 'Adds two integers, after a pause.',
  params: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'integer' }, b: { type: 'integer' } } },
  result: { type: 'object', required: ['sum'], properties: { sum: { type: 'integer' } } },
  run: (params) => new Promise((resolve) => setTimeout(() => resolve({ sum: params.a + params.b }), ${RUN_MS})),
}
`
const dir = (files: Record<string, string>) => {
  const path = mkdtempSync(join(tmpdir(), 'algoserve-rolling-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, name), text)
  return path
}
const oldModules = dir({ 'adder-1.0.0.mjs': adder('1.0.0') })
const bothModules = dir({ 'adder-1.0.0.mjs': adder('1.0.0'), 'adder-1.1.0.mjs': adder('1.1.0') })

const redis = await startRedis()
const prefix = freshPrefix()
const common = (modules: string) => [
  '--redis-url',
  redis.url,
  '--redis-prefix',
  prefix,
  '--prime-checker',
  'false',
  '--algorithms',
  modules,
  '--worker-threads',
  '1',
]
const started: StartedService[] = []
// A run that fails half-way leaves no service or Redis behind.
process.on('exit', () => {
  for (const one of started) one.child.kill('SIGKILL')
  redis.process.kill('SIGKILL')
})
const service = async (role: 'serve' | 'worker', modules: string) => {
  const args = role === 'serve' ? ['--run-jobs', 'false', ...common(modules)] : common(modules)
  // From the sources, on a machine shared with others: a start may take long.
  const one = await startService({ from: 'src', role, args, timeoutMs: 240_000 })
  started.push(one)
  return one
}
const [oldApi, newApi] = await Promise.all([service('serve', oldModules), service('serve', bothModules)])
const oldWorkers: StartedService[] = []
for (let i = 0; i < WORKERS; i++) oldWorkers.push(await service('worker', oldModules))

interface Created {
  id: string
  pin: string
}
const created: Created[] = []
// POSTs not answered 202, by answer (a status, or the client's error): never a job, so never lost.
const refused = new Map<string, number>()
const refuse = (why: string) => {
  refused.set(why, (refused.get(why) ?? 0) + 1)
}
let loading = true
// Paced: one job every 2000/RATE ms at each API, however long the answers take.
const load = async (url: string, pin: string) => {
  const every = 2000 / RATE
  const begun = performance.now()
  const inFlight: Promise<void>[] = []
  for (let i = 0; loading; i++) {
    inFlight.push(
      fetch(`${url}/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ algorithm: 'Adder', params: { a: i, b: 1 } }),
      })
        .then(async (response) => {
          const body = (await response.json()) as { job_id?: string }
          if (response.status === 202 && body.job_id !== undefined) created.push({ id: body.job_id, pin })
          else refuse(String(response.status))
        })
        .catch((error: unknown) => refuse((error as Error).cause?.toString() ?? String(error))),
    )
    // Behind the pace, it still yields: the answers are read on this thread.
    await sleep(Math.max(0, begun + (i + 1) * every - performance.now()))
  }
  await Promise.all(inFlight)
}

const loads = Promise.all([load(oldApi.url, '1.0.0'), load(newApi.url, '1.1.0')])
const upgradeBegun = performance.now()
await sleep(STEP_S * 1000)
for (const retired of oldWorkers) {
  await service('worker', bothModules)
  await sleep(STEP_S * 1000)
  await retired.stop()
  await sleep(STEP_S * 1000)
}
loading = false
await loads
const loadSeconds = (performance.now() - upgradeBegun) / 1000

interface Ended {
  status: string
  created_at: string
  completed_at: string | null
  metadata: { version?: string } | null
}
const read = async (id: string): Promise<Ended | undefined> => {
  const response = await fetch(`${newApi.url}/jobs/${id}?wait=5`).catch(() => undefined)
  return response?.status === 200 ? ((await response.json()) as Ended) : undefined
}
const ended = new Map<string, Ended>()
const deadline = Date.now() + WAIT_S * 1000
while (ended.size < created.length && Date.now() < deadline) {
  const left = created.filter(({ id }) => !ended.has(id))
  for (let i = 0; i < left.length; i += 200) {
    const batch = left.slice(i, i + 200)
    const jobs = await Promise.all(batch.map(({ id }) => read(id)))
    jobs.forEach((job, j) => {
      if (job !== undefined && (job.status === 'completed' || job.status === 'failed'))
        ended.set((batch[j] as Created).id, job)
    })
  }
}

console.log('## A rolling upgrade of the workers on Redis\n')
console.log(
  `${WORKERS} workers of Adder 1.0.0 replaced one by one by workers of 1.0.0 and 1.1.0, ${STEP_S} s a step, ` +
    `under ${RATE} jobs/s for ${loadSeconds.toFixed(0)} s (half pinned to each version; runs of ${RUN_MS} ms).\n`,
)
console.log(
  '| pinned to | created | completed | failed | lost | on another version | p50 latency | p99 latency |',
)
console.log('|---|---|---|---|---|---|---|---|')
const shown = (values: number[], p: number) =>
  values.length === 0 ? '-' : `${percentile(values, p).toFixed(0)} ms`
for (const pin of ['1.0.0', '1.1.0']) {
  const mine = created.filter((job) => job.pin === pin)
  const done = mine.map(({ id }) => ended.get(id)).filter((job) => job !== undefined)
  const completed = done.filter((job) => job.status === 'completed')
  const wrong = completed.filter((job) => job.metadata?.version !== pin).length
  const latencies = completed.map(
    (job) => Date.parse(job.completed_at as string) - Date.parse(job.created_at),
  )
  console.log(
    `| ${pin} | ${mine.length} | ${completed.length} | ${done.length - completed.length} | ` +
      `${mine.length - done.length} | ${wrong} | ${shown(latencies, 0.5)} | ${shown(latencies, 0.99)} |`,
  )
}
const refusals = [...refused].map(([why, count]) => `${count} × ${why}`).join(', ')
console.log(`\nPOSTs not accepted (no job made, none lost): ${refusals === '' ? 'none' : refusals}`)

await Promise.all(started.map((one) => one.stop()))
await redis.close()
rmSync(oldModules, { recursive: true, force: true })
rmSync(bothModules, { recursive: true, force: true })
// The targets: no accepted job lost, none on another version than its pin.
const wrong = created.filter(({ id, pin }) => ended.get(id)?.metadata?.version !== pin).length
process.exit(wrong > 0 ? 1 : 0)

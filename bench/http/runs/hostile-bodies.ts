// Hostile bodies and the 64-bit fast path: what one request costs the event loop, for the worst bodies
// this script can find within ALGOSERVE_MAX_BODY_BYTES, and /healthz latency while 4 clients loop the
// worst of them. The service runs in this process (createService, its defaults); the clients run in
// another process (for the per-request figures) and worker threads (for the load), so this process's CPU
// time between two requests is the cost of one request: reading it, parsing, validating and answering.
// Usage: npm run bench:hostile   (ROUNDS=15 LOAD_SECONDS=10; the first section is CPU time of this
// process per request, the client being another process; loop-active time counts any time the OS took
// the core away too, so on a loaded machine it runs above CPU time)

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { parse, stringify } from 'lossless-json'
import { INLINE } from '../../../src/algorithms/algorithm.js'
import { primeChecker } from '../../../src/algorithms/prime-checker/index.js'
import { defaultConfig } from '../../../src/config.js'
import { createService } from '../../../src/service.js'
import { writeResultOnExit } from '../../lib/markdown-results.js'
import { percentile, upperMedian } from '../../lib/stats.js'

writeResultOnExit(
  'hostile-bodies',
  {
    title: 'the worst bodies within the size limit',
    script: 'bench/http/runs/hostile-bodies.ts',
    npm: 'npm run bench:hostile',
    history: 'docs/benchmarks/hostile-traffic.md',
    command: 'npx tsx bench/http/runs/hostile-bodies.ts',
  },
  ['LOAD_SECONDS', 'ROUNDS'],
)

const ROUNDS = Number(process.env.ROUNDS ?? 15)
const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 10)

const config = {
  ...defaultConfig(),
  port: 0,
  logLevel: 'silent' as const,
  dataDir: mkdtempSync(join(tmpdir(), 'hostile-')),
}
const limit = config.maxBodyBytes - 64
const service = await createService(config)
await service.app.listen({ host: '127.0.0.1', port: 0 })
service.start()
const address = service.app.server.address()
if (address === null || typeof address === 'string') throw new Error('no address')
const url = `http://127.0.0.1:${address.port}`

const fill = (unit: string, around: (inner: string) => string) => {
  const count = Math.floor((limit - around('').length) / (unit.length + 1))
  return around(Array(count).fill(unit).join(','))
}
const invoke = (value: string) => `{"number": ${value}}`
const job = (value: string) => `{"algorithm": "PrimeChecker", "params": {"number": 7, "x": ${value}}}`

// Each candidate: a body at most max_body_bytes long; the kinds of work a body can ask of a parser,
// a validator and an echo, each pushed to the size limit.
const candidates: [string, string, string, Record<string, string>?][] = [
  ['small prime (baseline)', '/invoke', invoke('97')],
  ['64-bit prime 2^64-59', '/invoke', invoke('18446744073709551557')],
  ['balanced 64-bit semiprime', '/invoke', invoke(String(4294967279n * 4294967291n))],
  ['[[],[],...] 1 MiB in number', '/invoke', fill('[]', (s) => invoke(`[${s}]`))],
  ['[[],[],...] 1 MiB in params.x', '/jobs', fill('[]', (s) => job(`[${s}]`))],
  ['[0,0,...] 1 MiB', '/invoke', fill('0', (s) => invoke(`[${s}]`))],
  ['{"k":0,...} 1 MiB', '/invoke', fill('"k":0', (s) => invoke(`{${s}}`))],
  ['9,999 values of 100 digits', '/invoke', invoke(`[${Array(9_998).fill('1'.repeat(100)).join(',')}]`)],
  [
    '9,999 strings of 100 chars',
    '/jobs',
    job(
      `[${Array(9_998)
        .fill(`"${'a'.repeat(98)}"`)
        .join(',')}]`,
    ),
  ],
  [
    'arrays 32 deep x 300 wide',
    '/invoke',
    invoke(
      `[${Array(300)
        .fill(`${'['.repeat(31)}${']'.repeat(31)}`)
        .join(',')}]`,
    ),
  ],
  ['5000 deep', '/invoke', invoke(`${'['.repeat(5000)}${']'.repeat(5000)}`)],
  ['1 MiB string in number', '/invoke', invoke(`"${'7'.repeat(limit - 20)}"`)],
  ['1 MiB of digits', '/invoke', invoke('7'.repeat(limit - 20))],
  ['1 MiB of \\n escapes', '/invoke', invoke(`"${'\\n'.repeat((limit - 20) / 2)}"`)],
  ['1 MiB of \\u escapes', '/invoke', invoke(`"${'\\u00e9'.repeat((limit - 20) / 6)}"`)],
  ['1 MiB key', '/invoke', `{"${'k'.repeat(limit - 30)}": 1, "number": 7}`],
  ['1 MiB whitespace', '/invoke', `{${' '.repeat(limit - 20)}"number": 7}`],
  ['1 MiB, not JSON content type', '/invoke', 'x'.repeat(limit), { 'content-type': 'text/plain' }],
  ['1 MiB invalid at the end', '/invoke', invoke(`"${'a'.repeat(limit - 30)}"`).slice(0, -1)],
  ['1e999999999 exponent', '/invoke', invoke(`1${'0'.repeat(4200)}e999999999`)],
]

// The measuring client is another process, so that this process's CPU time is the service's alone.
const CLIENT = `
process.on('message', async ({ path, body, headers, times }) => {
  const statuses = []
  for (let i = 0; i < times; i++) {
    const response = await fetch(${JSON.stringify(url)} + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })
    statuses.push(response.status)
    await response.arrayBuffer()
  }
  process.send(statuses)
})`
const one = spawn(process.execPath, ['-e', CLIENT], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
const send = (path: string, body: string, headers: Record<string, string> = {}, times = 1) =>
  new Promise<number[]>((resolve) => {
    one.once('message', (m) => resolve(m as number[]))
    one.send({ path, body, headers, times })
  })
const cpuMs = (since: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(since)
  return (user + system) / 1000
}

// The old path's cost for the same body: lossless-json parse plus the echo written back.
function oldPathMs(body: string): number | string {
  const started = performance.now()
  try {
    const value = parse(body) as Record<string, unknown>
    stringify(value)
  } catch (error) {
    if (error instanceof RangeError) return 'stack overflow'
  }
  return performance.now() - started
}

console.log(
  `## Event-loop time per request, ${ROUNDS} requests each (median and max), Node ${process.version}`,
)
console.log()
console.log(
  '| body | bytes | status | CPU ms median | CPU ms max | loop-active ms median | longest block ms | old parse+echo ms |',
)
console.log('|---|---|---|---|---|---|---|---|')
const costs: {
  name: string
  path: string
  body: string
  headers?: Record<string, string>
  median: number
}[] = []
const delay = monitorEventLoopDelay({ resolution: 1 })
for (const [name, path, body, headers] of candidates) {
  await send(path, body, headers, 3)
  const times: number[] = []
  const cpu: number[] = []
  let status = 0
  delay.reset()
  delay.enable()
  for (let i = 0; i < ROUNDS; i++) {
    const before = performance.eventLoopUtilization()
    const cpuBefore = process.cpuUsage()
    ;[status = 0] = await send(path, body, headers)
    cpu.push(cpuMs(cpuBefore))
    times.push(performance.eventLoopUtilization(before).active)
  }
  delay.disable()
  const block = Math.max(0, delay.max / 1e6 - 1)
  const old = oldPathMs(body)
  console.log(
    `| ${name} | ${body.length} | ${status} | ${upperMedian(cpu).toFixed(2)} | ${Math.max(...cpu).toFixed(2)} | ${upperMedian(times).toFixed(2)} | ${block.toFixed(1)} | ${typeof old === 'number' ? old.toFixed(1) : old} |`,
  )
  costs.push({ name, path, body, headers, median: upperMedian(cpu) })
}

// /healthz under the worst bodies, against /healthz alone, in the same run.
const worst = costs
  .filter((c) => !c.name.includes('baseline'))
  .sort((a, b) => b.median - a.median)
  .slice(0, 4)
const LOADER = `
const { parentPort, workerData } = require('node:worker_threads')
let running = true
parentPort.on('message', () => { running = false })
;(async () => {
  let n = 0
  while (running) {
    const response = await fetch(workerData.url + workerData.path, { method: 'POST', body: workerData.body, headers: { 'content-type': 'application/json', ...workerData.headers } })
    await response.arrayBuffer()
    n++
  }
  parentPort.postMessage(n)
})()`
async function healthz(seconds: number): Promise<number[]> {
  const prober = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads')
    ;(async () => {
      const out = []
      const end = Date.now() + workerData.ms
      while (Date.now() < end) {
        const t = performance.now()
        await (await fetch(workerData.url + '/healthz')).arrayBuffer()
        out.push(performance.now() - t)
        await new Promise((r) => setTimeout(r, 10))
      }
      parentPort.postMessage(out)
    })()`,
    { eval: true, workerData: { url, ms: seconds * 1000 } },
  )
  const [samples] = (await new Promise((resolve) => prober.once('message', (m) => resolve([m])))) as [
    number[],
  ]
  await prober.terminate()
  return samples
}
const quiet = await healthz(Math.min(5, LOAD_SECONDS))
const loaders = Array.from({ length: 4 }, (_, i) => {
  const c = worst[i % worst.length] as (typeof worst)[number]
  return new Worker(LOADER, {
    eval: true,
    workerData: { url, path: c.path, body: c.body, headers: c.headers ?? {} },
  })
})
const loaded = await healthz(LOAD_SECONDS)
const counts = await Promise.all(
  loaders.map(
    (w) =>
      new Promise<number>((resolve) => {
        w.once('message', resolve)
        w.postMessage('stop')
      }),
  ),
)
await Promise.all(loaders.map((w) => w.terminate()))
console.log()
console.log(
  `## /healthz while 4 clients loop the 4 costliest bodies (${worst.map((w) => w.name).join('; ')}), ${LOAD_SECONDS} s`,
)
console.log()
console.log('| /healthz | probes | p50 ms | p99 ms | max ms | hostile requests answered |')
console.log('|---|---|---|---|---|---|')
console.log(
  `| alone | ${quiet.length} | ${percentile(quiet, 0.5).toFixed(2)} | ${percentile(quiet, 0.99).toFixed(2)} | ${Math.max(...quiet).toFixed(2)} | - |`,
)
console.log(
  `| under the 4 loops | ${loaded.length} | ${percentile(loaded, 0.5).toFixed(2)} | ${percentile(loaded, 0.99).toFixed(2)} | ${Math.max(...loaded).toFixed(2)} | ${counts.reduce((a, b) => a + b, 0)} |`,
)

// The 64-bit fast path's own time on the event loop: the attempt runIfCheap makes before a balanced
// semiprime goes to the pool, against a prime it answers.
console.log()
console.log('## The 64-bit inline attempt (runIfCheap), 2000 calls each')
console.log()
console.log('| number | answered inline | median µs | p99 µs |')
console.log('|---|---|---|---|')
for (const [name, number] of [
  ['2^64-59 (prime)', 2n ** 64n - 59n],
  ['4294967279 * 4294967291 (balanced semiprime)', 4294967279n * 4294967291n],
  ['2^64-1 (65537 * 6700417 left)', 2n ** 64n - 1n],
] as const) {
  const times: number[] = []
  let answered = false
  for (let i = 0; i < 2000; i++) {
    const started = performance.now()
    answered = primeChecker[INLINE].runIfCheap({ number }) !== undefined
    times.push((performance.now() - started) * 1000)
  }
  console.log(
    `| ${name} | ${answered} | ${upperMedian(times).toFixed(1)} | ${percentile(times, 0.99).toFixed(1)} |`,
  )
}

one.kill()
await service.shutdown(0)
rmSync(config.dataDir, { recursive: true, force: true })

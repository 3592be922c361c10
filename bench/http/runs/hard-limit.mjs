// A run that never looks at its signal, past a 500 ms limit: how long its caller waits for the answer
// (500 ALGORITHM_ERROR once the thread is terminated and gone), and what /healthz answers meanwhile.
// The service loads a module that spins in a busy loop with timeoutMs 500; CALLS calls to it are made
// CONCURRENCY at a time while another client asks GET /healthz every HEALTH_EVERY_MS ms, one request
// at a time. Baseline in the same run: the same /healthz client for the same time with no spin call.
// Usage: npm run build && node bench/http/runs/hard-limit.mjs   (CALLS=20 CONCURRENCY=1 HEALTH_EVERY_MS=10)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { commandLine, writeResult } from '../../lib/results.mjs'
import { startService } from '../../lib/service.mjs'
import { percentile } from '../../lib/stats.mjs'

const CALLS = Number(process.env.CALLS ?? 20)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 1)
const HEALTH_EVERY_MS = Number(process.env.HEALTH_EVERY_MS ?? 10)

const work = mkdtempSync(join(tmpdir(), 'algoserve-hard-limit-'))
writeFileSync(
  join(work, 'spin.mjs'),
  `export default {
  name: 'Spin',
  version: '1.0.0',
  description: 'Spins until stopped, never looking at its signal.',
  params: { type: 'object' },
  result: { type: 'object' },
  timeoutMs: 500,
  run() { for (;;) {} },
}
`,
)
const service = await startService({
  args: ['--data-dir', join(work, 'data'), '--log-level', 'fatal'],
  env: { ALGOSERVE_ALGORITHMS: join(work, 'spin.mjs') },
  stdio: ['ignore', 'inherit', 'inherit'],
  port: process.env.PORT === undefined ? undefined : Number(process.env.PORT),
  timeoutMs: 30_000,
})
const base = service.url
process.on('exit', () => {
  service.child.kill()
  rmSync(work, { recursive: true, force: true })
})

/** GET /healthz one at a time, every HEALTH_EVERY_MS, until `done()`; the latencies in ms. */
async function probeHealth(done) {
  const times = []
  while (!done()) {
    const start = performance.now()
    const response = await fetch(`${base}/healthz`)
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`/healthz answered ${response.status}`)
    times.push(performance.now() - start)
    await sleep(HEALTH_EVERY_MS)
  }
  return times
}

const ms = (value) => value.toFixed(1)
const summary = (times) =>
  `${times.length} requests, p50 ${ms(percentile(times, 0.5))} ms, p99 ${ms(percentile(times, 0.99))} ms, max ${ms(Math.max(...times))} ms`

// The spin calls, CONCURRENCY at a time, while /healthz is asked.
let calling = true
const health = probeHealth(() => !calling)
const answers = []
const statuses = new Map()
const started = performance.now()
let next = 0
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < CALLS) {
      next++
      const start = performance.now()
      const response = await fetch(`${base}/algorithms/Spin/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
      const body = await response.json()
      answers.push(performance.now() - start)
      const key = `${response.status} ${body.error ?? ''}`
      statuses.set(key, (statuses.get(key) ?? 0) + 1)
    }
  }),
)
const spinMs = performance.now() - started
calling = false
const during = await health

// The baseline: the same /healthz client for as long, with no spin call.
const idleUntil = performance.now() + spinMs
const idle = await probeHealth(() => performance.now() >= idleUntil)

console.log(
  `## A run past its 500 ms limit that ignores its signal: ${CALLS} calls, ${CONCURRENCY} at a time`,
)
console.log()
console.log(`answers: ${[...statuses].map(([key, n]) => `${n} x ${key}`).join(', ')}`)
console.log(
  `answer time: p50 ${ms(percentile(answers, 0.5))} ms, p99 ${ms(percentile(answers, 0.99))} ms, max ${ms(Math.max(...answers))} ms`,
)
console.log(`/healthz during the calls (every ${HEALTH_EVERY_MS} ms): ${summary(during)}`)
console.log(`/healthz with no call, as long: ${summary(idle)}`)
const figures = (times) => [
  times.length,
  ms(percentile(times, 0.5)),
  ms(percentile(times, 0.99)),
  ms(Math.max(...times)),
]
writeResult('hard-limit', {
  title: 'a run past its time limit that ignores its signal',
  script: 'bench/http/runs/hard-limit.mjs',
  npm: 'npm run bench:hard-limit',
  history: 'docs/benchmarks/algorithms.md',
  command: commandLine(['CALLS', 'CONCURRENCY', 'HEALTH_EVERY_MS'], 'node bench/http/runs/hard-limit.mjs'),
  tables: [
    {
      caption: `${CALLS} calls, ${CONCURRENCY} at a time, to a module spinning past its 500 ms limit:`,
      columns: ['requests', 'n', 'p50 ms', 'p99 ms', 'max ms'],
      rows: [
        ['the calls', ...figures(answers)],
        [`/healthz during the calls, every ${HEALTH_EVERY_MS} ms`, ...figures(during)],
        ['/healthz with no call, as long (the baseline)', ...figures(idle)],
      ],
    },
  ],
  notes: [
    `Answers: ${[...statuses].map(([key, n]) => `${n} × ${key.trim()}`).join(', ')}.`,
    'Targets: each call answered within 1.5 s; `/healthz` p99 under 50 ms meanwhile.',
  ],
})
process.exit(0)

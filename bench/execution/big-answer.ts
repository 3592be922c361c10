// A process algorithm answering 15 MB, against the service's event loop and memory: `/healthz` polled one
// request after another during each answer (p50, p99, max) and idle before, and the service's RSS after
// one answer as big (warm), at its peak during the next ones (sampled every 20 ms), and 2 s after. The
// service is run from a checkout given as the first argument (this one by default) through tsx, so that
// two revisions can be compared in one session; the program is this checkout's
// test/fixtures/misbehaving/on-demand-js in its mode `huge`.
// Usage: npm run bench:big-answer [-- /path/to/other/checkout]   (ROUNDS=3 BYTES=15000000)
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Agent, fetch, type Response } from 'undici'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { startService } from '../lib/service.js'
import { nearestRankPercentile } from '../lib/stats.js'

writeResultOnExit(
  'big-answer',
  {
    title: 'a process answering 15 MB, against the event loop and memory',
    script: 'bench/execution/big-answer.ts',
    npm: 'npm run bench:big-answer',
    history: 'docs/benchmarks/algorithms.md',
    command: 'npx tsx bench/execution/big-answer.ts',
  },
  ['BYTES', 'ROUNDS'],
)

const ROUNDS = Number(process.env.ROUNDS ?? 3)
const BYTES = Number(process.env.BYTES ?? 15_000_000)
const checkout = resolve(process.argv[2] ?? fileURLToPath(new URL('../..', import.meta.url)))
const fixture = fileURLToPath(
  new URL('../../test/fixtures/misbehaving/on-demand-js/process.mjs', import.meta.url),
)

const work = mkdtempSync(join(tmpdir(), 'algoserve-big-answer-'))
writeFileSync(
  join(work, 'algorithm.json'),
  JSON.stringify({
    name: 'BigAnswer',
    version: '1.0.0',
    description: 'Answers with a string of params.bytes bytes.',
    params: { type: 'object' },
    result: { type: 'object' },
    timeoutMs: 600_000,
    command: [process.execPath, fixture],
  }),
)

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+([0-9]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

async function start(): Promise<{ child: ChildProcess; url: string }> {
  return await startService({
    checkout,
    from: 'src',
    args: ['--data-dir', join(work, 'data'), '--algorithms', work, '--log-level', 'info'],
    env: { ALGOSERVE_INVOKE_TIMEOUT_MS: '600000' },
    timeoutMs: 120_000,
    everyMs: 100,
  })
}

/**
 * GET /healthz one after another while `busy` holds; each one's time in ms. On connections of its own,
 * closed after: one left idle across a stall of the service is closed under the next request.
 */
async function poll(url: string, busy: () => boolean): Promise<number[]> {
  const dispatcher = new Agent()
  const times: number[] = []
  try {
    while (busy()) {
      const start = performance.now()
      await (await fetch(`${url}/healthz`, { dispatcher })).arrayBuffer()
      times.push(performance.now() - start)
    }
  } finally {
    await dispatcher.close()
  }
  return times
}

const { child, url } = await start()
const pid = child.pid as number
try {
  // Polling stops when the answer's head arrives (its body with it): reading the body here would stall
  // this process's own loop and be counted as the service's.
  const call = () =>
    fetch(`${url}/algorithms/BigAnswer/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'huge', bytes: BYTES }),
      dispatcher: new Agent(),
    })
  const answered = async (response: Response) => {
    const body = await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`answered ${response.status}`)
    return body.byteLength
  }
  // Warm: one answer as big (the output thread started, the JIT warm), then the idle figures.
  await answered(await call())
  await sleep(2000)
  let idleUntil = performance.now() + 2000
  const idle = (await poll(url, () => performance.now() < idleUntil)).sort((a, b) => a - b)
  const before = rssMb(pid)
  let peak = before
  const during: number[] = []
  const answerMs: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    let answering = true
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(pid))
    }, 20)
    const started = performance.now()
    const answer = call().finally(() => {
      answering = false
    })
    during.push(...(await poll(url, () => answering)))
    const bytes = await answered(await answer)
    answerMs.push(performance.now() - started)
    clearInterval(sampler)
    if (bytes < BYTES) throw new Error(`an answer of ${bytes} bytes`)
  }
  await sleep(2000)
  const after = rssMb(pid)
  during.sort((a, b) => a - b)
  answerMs.sort((a, b) => a - b)
  idleUntil = 0
  const ms = (value: number) => value.toFixed(1)
  console.log(`checkout ${checkout}, ${ROUNDS} answers of ${BYTES} bytes`)
  console.log(
    `/healthz idle: ${idle.length} requests, p50 ${ms(nearestRankPercentile(idle, 0.5))} ms, ` +
      `p99 ${ms(nearestRankPercentile(idle, 0.99))} ms`,
  )
  console.log(
    `/healthz during the answers: ${during.length} requests, p50 ${ms(nearestRankPercentile(during, 0.5))} ms, ` +
      `p99 ${ms(nearestRankPercentile(during, 0.99))} ms, max ${ms(during.at(-1) ?? Number.NaN)} ms`,
  )
  console.log(`answer, median: ${ms(nearestRankPercentile(answerMs, 0.5))} ms`)
  console.log(
    `RSS: before ${ms(before)} MiB, peak during ${ms(peak)} MiB (+${ms(peak - before)}), ` +
      `after ${ms(after)} MiB`,
  )
} finally {
  child.kill('SIGTERM')
  await new Promise((done) => child.once('exit', done))
  rmSync(work, { recursive: true, force: true })
}

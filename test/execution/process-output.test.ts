// A process's stdout read off the main thread, with a real program (test/fixtures/misbehaving/on-demand-js):
// a 15 MB answer while /healthz is polled (p99 under 50 ms over the answer, the bound the product sets),
// the result intact with its integers exact through the reply and the job store, and the limits of a
// result and of a progress message (maxResultBytes, maxProgressBytes) failing the call in their words.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { Agent, fetch as undiciFetch } from 'undici'
import { loadManifest } from '../../src/algorithms/process-manifest.js'
import { ProcessPool } from '../../src/execution/process-pool.js'
import { ResultJson } from '../../src/execution/process-protocol.js'
import { RunFailure } from '../../src/execution/timed-run.js'
import { listening, serveFresh } from '../helpers/child.js'
import { parseExact } from '../helpers/json.js'
import { onDemandFolder } from '../helpers/misbehaviour.js'
import { until } from '../helpers/time.js'

const BIG = 18446744073709551617n
const folders: string[] = []
const pools: ProcessPool[] = []
after(async () => {
  await Promise.all(pools.map((pool) => pool.close()))
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

/** A folder with the fixture's algorithm.json, other members given; removed at the end. */
function manifestFolder(members: Record<string, unknown> = {}): string {
  const folder = onDemandFolder({ timeoutMs: 60_000, ...members })
  folders.push(folder)
  return folder
}

function startPool(members: Record<string, unknown> = {}): ProcessPool {
  const log = pino({ level: 'silent' })
  const pool = new ProcessPool(loadManifest(join(manifestFolder(members), 'algorithm.json')), {
    invokeQueueTimeoutMs: 5000,
  })
  pools.push(pool)
  pool.start(log as unknown as FastifyBaseLogger)
  return pool
}

const failsWith = (message: string) => (error: unknown) => {
  assert.ok(error instanceof RunFailure)
  assert.equal(error.message, message)
  return true
}

test('a long result is read off the main thread: its JSON kept, its integers exact', async () => {
  const pool = startPool()
  const run = await pool.run({ mode: 'huge-exact', count: 1000, bytes: 100_000 }, { lane: 'invoke' })
  assert.ok(run.resultJson !== undefined, 'the result came as JSON from the output thread')
  const result = run.result as { big: bigint[]; pad: string }
  assert.equal(result.big.length, 1001)
  assert.ok(result.big.slice(0, 1000).every((n) => n === BIG))
  assert.equal(result.big[1000], -1)
  assert.equal(result.pad, 'x'.repeat(100_000))
  const json = `{"big":[${`${BIG},`.repeat(1000)}-1],"pad":"${'x'.repeat(100_000)}"}`
  assert.equal(run.resultJson.toString('utf8'), json)
  // A short one stays on the main thread, as a value.
  const short = await pool.run({ mode: 'big', n: BIG }, { lane: 'invoke' })
  assert.equal(short.resultJson, undefined)
  assert.deepEqual(short.result, { seen: String(BIG), n: BIG })
})

test('a long result that breaks the result schema fails the call; the process stays', async () => {
  const pool = startPool({ result: { type: 'object', required: ['pid'] } })
  const before = pool.pids[0] ?? (await until(() => pool.pids[0], 10_000, 'a process'))
  await assert.rejects(
    pool.run({ mode: 'huge', bytes: 100_000 }, { lane: 'invoke' }),
    failsWith("its result breaks its result schema: pid: must have required property 'pid'"),
  )
  assert.deepEqual(pool.pids, [before])
})

test('a progress message past maxProgressBytes (64 KiB by default) fails the call so', async () => {
  const pool = startPool()
  await assert.rejects(
    pool.run({ mode: 'huge-progress', bytes: 100 * 1024 }, { lane: 'job', progress: () => {} }),
    failsWith('its progress message was larger than its limit of 65536 bytes (maxProgressBytes)'),
  )
  const small = startPool({ maxProgressBytes: 1000 })
  await assert.rejects(
    small.run({ mode: 'huge-progress', bytes: 2000 }, { lane: 'job' }),
    failsWith('its progress message was larger than its limit of 1000 bytes (maxProgressBytes)'),
  )
})

test('a long progress message within its limit reaches the hook before the result after it', async () => {
  const pool = startPool({ maxProgressBytes: 1024 * 1024 })
  const seen: (string | undefined)[] = []
  let resolved = false
  const run = pool.run(
    { mode: 'huge-progress', bytes: 500 * 1024 },
    { lane: 'job', progress: (_fraction, message) => seen.push(resolved ? 'late' : message) },
  )
  const { result } = await run.then((value) => {
    resolved = true
    return value
  })
  assert.deepEqual(seen, ['y'.repeat(500 * 1024)])
  assert.equal(typeof (result as { pid: number }).pid, 'number')
})

test('a result past maxResultBytes fails the call in those words', async () => {
  const pool = startPool({ maxResultBytes: 1024 * 1024 })
  await assert.rejects(
    pool.run({ mode: 'huge', bytes: 2 * 1024 * 1024 }, { lane: 'invoke' }),
    failsWith(`its result was larger than its limit of ${1024 * 1024} bytes (maxResultBytes)`),
  )
  assert.ok(ResultJson)
})

/**
 * GET /healthz one after another until `stop` resolves; each one's time in ms. Its connections are its
 * own and closed after, so that none is left idle to be closed by the service under the next round.
 */
async function pollHealth(url: string, stop: Promise<unknown>): Promise<number[]> {
  let stopped = false
  const end = () => {
    stopped = true
  }
  stop.then(end, end)
  const dispatcher = new Agent()
  const times: number[] = []
  try {
    while (!stopped) {
      const start = performance.now()
      const response = await undiciFetch(`${url}/healthz`, { dispatcher })
      await response.arrayBuffer()
      times.push(performance.now() - start)
    }
  } finally {
    await dispatcher.close()
  }
  return times
}

test('/healthz stays under 50 ms p99 while a process answers 15 MB; the answer arrives intact', {
  timeout: 120_000,
}, async (t) => {
  const service = serveFresh(t, ['--algorithms', manifestFolder({ result: { type: 'object' } })])
  const url = await listening(service)
  // A connection of its own per call: the service closes one left idle while the last answer was read.
  const call = (params: Record<string, unknown>) =>
    undiciFetch(`${url}/algorithms/Misbehaving/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
      dispatcher: new Agent({ pipelining: 0 }),
    })
  const params = { mode: 'huge-exact', count: 100_000, bytes: 13_000_000 }
  const expected = `"result":{"big":[${`${BIG},`.repeat(100_000)}-1],"pad":"${'x'.repeat(13_000_000)}"}`
  // One answer to warm the service (its output thread, the JIT) before the measured ones.
  await (await call(params)).arrayBuffer()
  const times: number[] = []
  for (let round = 0; round < 3; round++) {
    // Measured from the call until its answer's head arrives; the body is read after.
    const answer = call(params)
    times.push(...(await pollHealth(url, answer)))
    const response = await answer
    assert.equal(response.status, 200)
    const text = await response.text()
    assert.ok(text.length > 15_000_000, `a 15 MB answer (${text.length} bytes)`)
    // Every digit as the program wrote it, in valid JSON.
    assert.ok(text.includes(expected), 'the result intact, its integers exact')
    assert.equal((JSON.parse(text) as { metadata: { algorithm: string } }).metadata.algorithm, 'Misbehaving')
  }
  times.sort((a, b) => a - b)
  const p99 = times[Math.ceil(times.length * 0.99) - 1] as number
  t.diagnostic(`/healthz over 3 answers of 15 MB: ${times.length} samples, p99 ${p99.toFixed(1)} ms`)
  assert.ok(times.length >= 300, `enough samples during the answers (${times.length})`)
  assert.ok(p99 < 50, `/healthz p99 ${p99.toFixed(1)} ms during a 15 MB answer`)
})

test("a long result reaches the job store as its JSON: the job's result is exact", {
  timeout: 60_000,
}, async (t) => {
  const service = serveFresh(t, ['--algorithms', manifestFolder({ result: { type: 'object' } })])
  const url = await listening(service)
  const created = await fetch(`${url}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      algorithm: 'Misbehaving',
      params: { mode: 'huge-exact', count: 10_000, bytes: 1000 },
    }),
  })
  assert.equal(created.status, 202)
  const { job_id } = (await created.json()) as { job_id: string }
  const job = await until(
    async () => {
      const body = parseExact(await (await fetch(`${url}/jobs/${job_id}`)).text()) as {
        status: string
        result: { big: bigint[]; pad: string } | null
      }
      return body.status !== 'pending' && body.status !== 'running' && body
    },
    30_000,
    'the job ended',
  )
  assert.equal(job.status, 'completed')
  assert.equal(job.result?.big.length, 10_001)
  assert.ok(job.result?.big.slice(0, 10_000).every((n) => n === BIG))
  assert.equal(job.result?.pad, 'x'.repeat(1000))
})

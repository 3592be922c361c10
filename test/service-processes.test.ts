// Which programs of process algorithms an Algoserve process starts: a worker those of the algorithms it
// serves (ALGOSERVE_WORKER_ALGORITHMS) alone, its /readyz depending on them alone; `serve` every one it
// loads. A process algorithm whose program is missing is the witness: it fails to start wherever it is
// started. Real services on a real redis-server.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startApp, type TestApp } from './helpers/app.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from './helpers/redis.js'
import { until } from './helpers/time.js'

const MISBEHAVING = fileURLToPath(new URL('fixtures/misbehaving/on-demand-js', import.meta.url))

interface Readiness {
  status: string
  checks: Record<string, boolean>
}

const readiness = async (app: TestApp) => {
  const response = await fetch(`${app.url}/readyz`)
  return { status: response.status, body: (await response.json()) as Readiness }
}

describe('the programs a process starts', { skip: skipWithoutRedis }, () => {
  let redis: RedisServer
  let broken: string
  const started: TestApp[] = []

  before(async () => {
    redis = await startRedis()
    broken = mkdtempSync(join(tmpdir(), 'algoserve-broken-'))
    writeFileSync(
      join(broken, 'algorithm.json'),
      JSON.stringify({
        name: 'Broken',
        version: '1.0.0',
        description: 'Its program is not there.',
        params: { type: 'object' },
        result: { type: 'object' },
        command: ['/nonexistent/algorithm-program'],
      }),
    )
  })
  after(async () => {
    await Promise.all(started.map((app) => app.close()))
    rmSync(broken, { recursive: true, force: true })
    await redis.close()
  })

  test('serve with the embedded store starts every program: the broken one makes it not ready', async () => {
    const app = await startApp({ algorithms: [MISBEHAVING, broken] })
    started.push(app)
    const seen = await until(
      async () => {
        const ready = await readiness(app)
        return ready.body.checks['process:Broken'] === false && ready
      },
      10_000,
      'the broken program seen failing',
    )
    assert.equal(seen.status, 503)
    assert.equal(seen.body.checks['process:Misbehaving'], true)
  })

  test('a worker starts the programs of the algorithms it serves alone, and is ready on them alone', async () => {
    const settings = { redisUrl: redis.url, redisPrefix: freshPrefix(), algorithms: [MISBEHAVING, broken] }
    const worker = await startApp({ ...settings, workerAlgorithms: ['Misbehaving'] }, { role: 'worker' })
    started.push(worker)
    // Its program runs: a job of the algorithm it serves is answered by it.
    const api = await startApp({ ...settings, runJobs: false })
    started.push(api)
    const post = await fetch(`${api.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"algorithm": "Misbehaving", "params": {}}',
    })
    const { job_id } = (await post.json()) as { job_id: string }
    const job = await until(
      async () => {
        const body = (await (await fetch(`${api.url}/jobs/${job_id}`)).json()) as { status: string }
        return body.status === 'completed' && body
      },
      20_000,
      'the job completed by the worker',
    )
    assert.equal(job.status, 'completed')
    const { status, body } = await readiness(worker)
    assert.equal(status, 200)
    assert.equal(body.checks['process:Misbehaving'], true)
    assert.equal('process:Broken' in body.checks, false, 'no program of Broken started')
  })
})

test("a program's stderr is logged with the request id of the call, or the job's id", async () => {
  const lines: Record<string, unknown>[] = []
  const stream = { write: (text: string) => lines.push(JSON.parse(text)) }
  const app = await startApp({ algorithms: [MISBEHAVING] }, { logger: { level: 'info', stream } })
  try {
    const call = await fetch(`${app.url}/algorithms/Misbehaving/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"mode": "stderr"}',
    })
    const { request_id } = (await call.json()) as { request_id: string }
    const post = await fetch(`${app.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"algorithm": "Misbehaving", "params": {"mode": "stderr"}}',
    })
    const { job_id } = (await post.json()) as { job_id: string }
    const stderr = () => lines.filter((line) => line.msg === 'and another')
    await until(() => stderr().length === 2, 10_000, 'the stderr of both runs logged')
    assert.deepEqual(
      stderr().map((line) => [line.algorithm, line.request_id, line.job_id]),
      [
        ['Misbehaving', request_id, undefined],
        ['Misbehaving', undefined, job_id],
      ],
    )
  } finally {
    await app.close()
  }
})

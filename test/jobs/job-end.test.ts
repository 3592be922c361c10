// What a job's end leaves for whoever debugs it, on every job backend: its metadata names the process and
// the run's number, the process logs one line at its end, and its program's stderr carries its id.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { hostname } from 'node:os'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { TestApp } from '../helpers/app.js'
import { tempDataDir } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { freshPrefix } from '../helpers/redis.js'
import { until } from '../helpers/time.js'

const MISBEHAVING = fileURLToPath(new URL('../fixtures/misbehaving/on-demand-js', import.meta.url))
const WORKER = `${hostname()}:${process.pid}`

type Line = Record<string, unknown>

forEachBackend((backend) => {
  const lines: Line[] = []
  const logger = { level: 'info', stream: { write: (text: string) => lines.push(JSON.parse(text)) } }
  let server: TestApp
  before(async () => {
    server = await backend.start({ algorithms: [MISBEHAVING] }, { logger })
  })
  after(() => server.close())

  const endsOf = (id: string) => lines.filter((line) => line.job_id === id && line.duration_ms !== undefined)

  test("a completed job's metadata names the worker and the attempt; one line at info logs its end", async () => {
    const created = await createJob(server.url, { algorithm: 'Misbehaving', params: { mode: 'stderr' } })
    const id = created.json.job_id as string
    const job = await waitForJob(server.url, id)
    assert.equal(job.status, 'completed')
    assert.equal(job.metadata?.worker, WORKER)
    assert.equal(job.metadata?.attempt, 1)
    await until(() => endsOf(id).length === 1, 10_000, 'the end logged')
    const { duration_ms, time, pid, hostname: host, ...end } = endsOf(id)[0] as Line
    assert.equal(typeof duration_ms, 'number')
    assert.deepEqual(end, {
      level: 30,
      component: 'jobs',
      job_id: id,
      algorithm: 'Misbehaving',
      version: '1.0.0',
      status: 'completed',
      attempt: 1,
      worker: WORKER,
      msg: 'job completed',
    })
    assert.equal(`${host}:${pid}`, WORKER, 'the worker is what the log lines name the process by')
    // The program's stderr, logged with the job's id.
    const stderr = lines.filter((line) => line.msg === 'a line for the log' || line.msg === 'and another')
    assert.deepEqual(
      stderr.map((line) => [line.msg, line.algorithm, line.job_id]),
      [
        ['a line for the log', 'Misbehaving', id],
        ['and another', 'Misbehaving', id],
      ],
    )
  })

  test("a failed job's end is logged so too, and its metadata stays null", async () => {
    const created = await createJob(server.url, { algorithm: 'Misbehaving', params: { mode: 'error' } })
    const id = created.json.job_id as string
    const job = await waitForJob(server.url, id)
    assert.equal(job.status, 'failed')
    assert.equal(job.metadata, null)
    await until(() => endsOf(id).length === 1, 10_000, 'the end logged')
    const end = endsOf(id)[0] as Line
    assert.deepEqual(
      [end.msg, end.status, end.attempt, end.algorithm, end.version, end.worker],
      ['job failed', 'failed', 1, 'Misbehaving', '1.0.0', WORKER],
    )
  })

  test('a run given back at a shutdown runs again as attempt 2, which metadata and the log line say', async () => {
    const dataDir = tempDataDir()
    const settings = { algorithms: [MISBEHAVING], dataDir, redisPrefix: freshPrefix() }
    const first = await backend.start(settings, { logger })
    let id: string
    try {
      const created = await createJob(first.url, {
        algorithm: 'Misbehaving',
        params: { mode: 'slow', after_ms: 1000 },
      })
      id = created.json.job_id as string
      await waitForJob(first.url, id, (job) => job.status === 'running')
    } finally {
      await first.close()
    }
    const second = await backend.start(settings, { logger })
    try {
      const job = await waitForJob(second.url, id)
      assert.equal(job.status, 'completed')
      assert.equal(job.metadata?.attempt, 2)
      await until(() => endsOf(id).length === 1, 10_000, 'the end logged')
      const end = endsOf(id)[0] as Line
      assert.deepEqual([end.status, end.attempt], ['completed', 2])
    } finally {
      await second.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

// Nothing waits without a word: GET /algorithms and GET /algorithms/{name} count the live workers serving
// each algorithm, read at each request (a worker started and stopped changes them); a job created while
// none serves its algorithm is told so at 202, and GET /jobs/{job_id} says so while it waits. The
// embedded store is served by its own process. Real services on a real redis-server.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startApp, type TestApp } from '../helpers/app.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../helpers/redis.js'
import { until } from '../helpers/time.js'

const NO_WORKER = /no live worker takes jobs of the algorithm 'PrimeChecker' now/

const workersIn = async (url: string) => {
  const { algorithms } = (await (await fetch(`${url}/algorithms`)).json()) as {
    algorithms: Array<{ name: string; workers: number | null }>
  }
  const one = (await (await fetch(`${url}/algorithms/PrimeChecker`)).json()) as { workers: number | null }
  return { listed: algorithms.find(({ name }) => name === 'PrimeChecker')?.workers, one: one.workers }
}

const readJob = async (url: string, id: string) =>
  (await (await fetch(`${url}/jobs/${id}`)).json()) as Record<string, unknown>

describe('embedded', () => {
  let app: TestApp
  before(async () => {
    app = await startApp()
  })
  after(() => app.close())

  test('the process serves its own jobs: one worker, and nothing to warn of', async () => {
    assert.deepEqual(await workersIn(app.url), { listed: 1, one: 1 })
    const created = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: 97 } })
    assert.equal(created.status, 202)
    assert.equal(created.json.message, 'Job accepted; GET /jobs/{job_id} tells its status.')
    const ended = await waitForJob(app.url, String(created.json.job_id))
    assert.equal(ended.status, 'completed')
    assert.equal('message' in ended, false)
  })
})

describe('redis', { skip: skipWithoutRedis }, () => {
  let redis: RedisServer
  let api: TestApp
  const prefix = freshPrefix()
  before(async () => {
    redis = await startRedis()
    // The API runs no jobs: its jobs wait for a worker.
    api = await startApp({ redisUrl: redis.url, redisPrefix: prefix, runJobs: false })
  })
  after(async () => {
    await api?.close()
    await redis?.close()
  })

  test('no worker: 0 in both routes, the 202 and the waiting job say so; then a worker runs it', async () => {
    assert.deepEqual(await workersIn(api.url), { listed: 0, one: 0 })
    const created = await createJob(api.url, { algorithm: 'PrimeChecker', params: { number: 97 } })
    assert.equal(created.status, 202)
    assert.equal(created.json.status, 'pending')
    assert.match(String(created.json.message), NO_WORKER)
    const id = String(created.json.job_id)
    const waiting = await readJob(api.url, id)
    assert.equal(waiting.status, 'pending')
    assert.match(String(waiting.message), NO_WORKER)

    const worker = await startApp({ redisUrl: redis.url, redisPrefix: prefix }, { role: 'worker' })
    try {
      // A new Worker names its Redis connection moments after its start.
      await until(async () => (await workersIn(api.url)).one === 1, 10_000, 'the worker counted')
      assert.deepEqual(await workersIn(api.url), { listed: 1, one: 1 })
      const ended = await waitForJob(api.url, id)
      assert.equal(ended.status, 'completed')
      assert.equal('message' in ended, false, 'only a waiting job has it')
      // Served now: a new job is told nothing more (the count is read again within a second).
      await until(
        async () => {
          const next = await createJob(api.url, { algorithm: 'PrimeChecker', params: { number: 7 } })
          return !NO_WORKER.test(String(next.json.message))
        },
        10_000,
        'the ordinary message',
      )
    } finally {
      await worker.close()
    }
    await until(async () => (await workersIn(api.url)).one === 0, 10_000, 'a stopped worker is not counted')
    assert.deepEqual(await workersIn(api.url), { listed: 0, one: 0 })
  })
})

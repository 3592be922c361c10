// A queue per algorithm on Redis: a worker that does not have a job's algorithm (or is told not to
// serve it) never takes the job, which stays pending until a worker that has it takes it; listing,
// summary and cancel read across the queues; GET /algorithms counts the workers serving each. Real API
// and worker services on a real redis-server.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { defaultConfig } from '../../../src/config.js'
import { ConfigError } from '../../../src/errors.js'
import { createService } from '../../../src/service.js'
import { type ModuleFolder, moduleSource, validMembers, writeModules } from '../../helpers/algorithms.js'
import { startApp, type TestApp } from '../../helpers/app.js'
import { createJob, type JobBody, waitForJob } from '../../helpers/jobs.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../../helpers/redis.js'
import { sleep, until } from '../../helpers/time.js'

/** How long a job no worker serves is watched staying pending. */
const STAYS_PENDING_MS = 1500

describe('a BullMQ queue per algorithm', { skip: skipWithoutRedis }, () => {
  let redis: RedisServer
  let modules: ModuleFolder
  let api: TestApp
  let primeOnly: TestApp
  const started: TestApp[] = []
  const redisSettings = () => ({ redisUrl: redis.url, redisPrefix: prefix, jobLockMs: 2000 })
  const prefix = freshPrefix()

  before(async () => {
    redis = await startRedis()
    modules = writeModules({ 'adder.mjs': moduleSource(validMembers('Adder')) })
    // The API runs no jobs: every job waits for a worker.
    api = await startApp({ ...redisSettings(), runJobs: false, algorithms: [modules.dir] })
    started.push(api)
  })
  after(async () => {
    await Promise.all(started.map((app) => app.close()))
    modules.remove()
    await redis.close()
  })

  const worker = async (overrides: Parameters<typeof startApp>[0] = {}) => {
    const app = await startApp({ ...redisSettings(), ...overrides }, { role: 'worker' })
    started.push(app)
    return app
  }
  const readyAlgorithms = async (app: TestApp) =>
    ((await (await fetch(`${app.url}/readyz`)).json()) as { algorithms?: string[] }).algorithms
  const workersOf = async () => {
    const { algorithms } = (await (await fetch(`${api.url}/algorithms`)).json()) as {
      algorithms: Array<{ name: string; workers: number | null }>
    }
    return Object.fromEntries(algorithms.map(({ name, workers }) => [name, workers]))
  }
  // A new Worker names its Redis connection once it has made it: moments after the start.
  const countedAs = async (expected: Record<string, number>, what = 'the workers counted') => {
    let seen: Record<string, number | null> = {}
    await until(
      async () => {
        seen = await workersOf()
        return JSON.stringify(seen) === JSON.stringify(expected)
      },
      10_000,
      what,
    ).catch(() => assert.deepEqual(seen, expected, what))
  }
  const read = async (id: string) => (await (await fetch(`${api.url}/jobs/${id}`)).json()) as JobBody
  const submit = async (algorithm: string, params: Record<string, unknown>) => {
    const created = await createJob(api.url, { algorithm, params })
    assert.equal(created.status, 202)
    return created.json.job_id as string
  }

  test("a worker without a job's algorithm never takes it; one that has it does", async () => {
    assert.deepEqual(await workersOf(), { Adder: 0, PrimeChecker: 0 }, 'the API runs no jobs')
    primeOnly = await worker()
    await countedAs({ Adder: 0, PrimeChecker: 1 })
    assert.deepEqual(await readyAlgorithms(primeOnly), ['PrimeChecker'])
    const adderJob = await submit('Adder', { a: 2, b: 3 })
    const primeJob = await submit('PrimeChecker', { number: 97 })
    assert.equal((await waitForJob(api.url, primeJob)).status, 'completed')
    await sleep(STAYS_PENDING_MS)
    assert.equal((await read(adderJob)).status, 'pending', 'the worker without Adder left its job alone')

    // Listing and the summary see both queues.
    const listed = (await (await fetch(`${api.url}/jobs?limit=10`)).json()) as { jobs: JobBody[] }
    assert.deepEqual(
      listed.jobs.map((job) => [job.job_id, job.status]),
      [
        [primeJob, 'completed'],
        [adderJob, 'pending'],
      ],
    )
    const byAlgorithm = (await (await fetch(`${api.url}/jobs?algorithm=Adder`)).json()) as { jobs: JobBody[] }
    assert.deepEqual(
      byAlgorithm.jobs.map((job) => job.job_id),
      [adderJob],
    )
    const summary = (await (await fetch(`${api.url}/job-summary`)).json()) as {
      counts: Record<string, number>
    }
    assert.equal(summary.counts.pending, 1)
    assert.equal(summary.counts.completed, 1)

    const adderOnly = await worker({ algorithms: [modules.dir], workerAlgorithms: ['Adder'] })
    assert.deepEqual(await readyAlgorithms(adderOnly), ['Adder'])
    await countedAs({ Adder: 1, PrimeChecker: 1 })
    const ended = await waitForJob(api.url, adderJob)
    assert.equal(ended.status, 'completed')
    assert.deepEqual(ended.result, { sum: 5 })
  })

  test('a job of an algorithm no running worker serves is cancelled from its own queue', async () => {
    // Of the test before's workers, only the one serving Adder is left.
    await primeOnly.close()
    started.splice(started.indexOf(primeOnly), 1)
    await countedAs({ Adder: 1, PrimeChecker: 0 }, 'a stopped worker is not counted')
    const waiting = await submit('PrimeChecker', { number: 101 })
    await sleep(STAYS_PENDING_MS)
    assert.equal((await read(waiting)).status, 'pending', 'only an Adder worker runs')
    const cancel = await fetch(`${api.url}/jobs/${waiting}/cancel`, { method: 'POST' })
    assert.equal(cancel.status, 200)
    const cancelled = await read(waiting)
    assert.equal(cancelled.status, 'failed')
    assert.equal(cancelled.error, 'The job was cancelled.')
  })

  test('ALGOSERVE_WORKER_ALGORITHMS names only loaded algorithms', async () => {
    await assert.rejects(
      createService(
        { ...defaultConfig(), ...redisSettings(), workerAlgorithms: ['Nowhere'] },
        { role: 'worker' },
      ),
      (error: unknown) =>
        error instanceof ConfigError &&
        /ALGOSERVE_WORKER_ALGORITHMS names Nowhere, not loaded here/.test(error.message),
    )
  })
})

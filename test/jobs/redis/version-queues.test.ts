// A queue per algorithm version on Redis: workers are counted by process, per algorithm and per version;
// a worker follows its reloads, taking the jobs of a version loaded since and none of a version no longer
// loaded. Real API and worker services on a real redis-server; the reload is the registry's (replaceWith).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { loadRegistry } from '../../../src/algorithms/registry.js'
import { type ModuleFolder, moduleSource, validMembers, writeModules } from '../../helpers/algorithms.js'
import { startApp, type TestApp } from '../../helpers/app.js'
import { createJob, type JobBody, waitForJob } from '../../helpers/jobs.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../../helpers/redis.js'
import { sleep, until } from '../../helpers/time.js'

const at = (version: string) => moduleSource(validMembers('Adder', undefined, version))

/** How long a job no worker takes is watched staying pending. */
const STAYS_PENDING_MS = 1500

describe('a queue per algorithm version', { skip: skipWithoutRedis }, () => {
  let redis: RedisServer
  let modules: ModuleFolder
  let api: TestApp
  let worker: TestApp
  const prefix = freshPrefix()

  before(async () => {
    redis = await startRedis()
    modules = writeModules({ 'adder-1.0.0.mjs': at('1.0.0'), 'adder-1.1.0.mjs': at('1.1.0') })
    const settings = {
      redisUrl: redis.url,
      redisPrefix: prefix,
      primeChecker: false,
      algorithms: [modules.dir],
    }
    api = await startApp({ ...settings, runJobs: false })
    worker = await startApp(settings, { role: 'worker' })
  })
  after(async () => {
    await worker?.close()
    await api?.close()
    modules?.remove()
    await redis?.close()
  })

  const counted = async (expected: Record<string, number>) => {
    let seen: Record<string, number> = {}
    await until(
      async () => {
        seen = Object.fromEntries((await api.service.backend.versionWorkers()) ?? [])
        return JSON.stringify(seen) === JSON.stringify(expected)
      },
      10_000,
      'the workers counted by version',
    ).catch(() => assert.deepEqual(seen, expected))
  }
  const submit = async () => {
    const created = await createJob(api.url, { algorithm: 'Adder', params: { a: 2, b: 3 } })
    assert.equal(created.status, 202)
    return created.json.job_id as string
  }
  const reload = async (files: string[]) =>
    worker.service.algorithms.replaceWith(
      await loadRegistry(
        files.map((name) => modules.file(name)),
        {},
        false,
      ),
    )

  test('one worker with two versions: counted once for the algorithm, once for each version', async () => {
    await counted({ 'Adder@1.0.0': 1, 'Adder@1.1.0': 1 })
    assert.equal((await api.service.backend.workers())?.get('Adder'), 1)
    const job = await waitForJob(api.url, await submit())
    assert.equal(job.status, 'completed')
    assert.equal((job.metadata as { version: string }).version, '1.1.0', 'the default: the highest')
  })

  test('a version reloaded away takes no more jobs; reloaded back, its waiting job runs', async () => {
    await reload(['adder-1.0.0.mjs'])
    await counted({ 'Adder@1.0.0': 1, 'Adder@1.1.0': 0 })
    const id = await submit()
    await sleep(STAYS_PENDING_MS)
    assert.equal(((await (await fetch(`${api.url}/jobs/${id}`)).json()) as JobBody).status, 'pending')
    await reload(['adder-1.0.0.mjs', 'adder-1.1.0.mjs'])
    await counted({ 'Adder@1.0.0': 1, 'Adder@1.1.0': 1 })
    const job = await waitForJob(api.url, id)
    assert.equal(job.status, 'completed')
    assert.equal((job.metadata as { version: string }).version, '1.1.0')
  })
})

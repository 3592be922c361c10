// Versions on Redis as operators upgrade: `algoserve serve` and `algoserve worker` child processes on a
// real redis-server. Workers of Adder 1.0.0 are replaced one by one (each new one started, then the old
// one stopped with SIGTERM) by workers of 1.0.0 and 1.1.0, while an API of 1.0.0 and an API of both
// create jobs, pinned to 1.0.0 and to 1.1.0 (the default of the second): no job is lost, and each runs on
// its pinned version. And a job queued by a release before versions (in the queue of its bare name) is
// run by a worker of this one, on its default version.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { type ModuleFolder, moduleSource, validMembers, writeModules } from '../../helpers/algorithms.js'
import { type Child, listening, start } from '../../helpers/child.js'
import { createJob, type JobBody, waitForJob } from '../../helpers/jobs.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../../helpers/redis.js'
import { sleep, until } from '../../helpers/time.js'

/** Adder at `version`: it sleeps `b` ms, so that runs are in flight as workers are replaced. */
const adderAt = (version: string) =>
  moduleSource(
    validMembers(
      'Adder',
      '(params) => new Promise((resolve) => setTimeout(() => resolve({ sum: params.a + params.b }), params.b))',
      version,
    ),
  )

/** How long each step of the upgrade leaves the load running before the next one. */
const STEP_MS = 1500

describe('a rolling upgrade of the workers on Redis', { skip: skipWithoutRedis }, () => {
  let redis: RedisServer
  let old: ModuleFolder
  let both: ModuleFolder
  const children: Child[] = []

  before(async () => {
    redis = await startRedis()
    old = writeModules({ 'adder-1.0.0.mjs': adderAt('1.0.0') })
    both = writeModules({ 'adder-1.0.0.mjs': adderAt('1.0.0'), 'adder-1.1.0.mjs': adderAt('1.1.0') })
  })
  after(async () => {
    for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL')
    await Promise.all(children.map((child) => child.exit))
    old?.remove()
    both?.remove()
    await redis?.close()
  })

  const flags = (prefix: string, modules: ModuleFolder) => [
    '--redis-url',
    redis.url,
    '--redis-prefix',
    prefix,
    '--job-lock-ms',
    '2000',
    '--worker-threads',
    '1',
    '--prime-checker',
    'false',
    '--algorithms',
    modules.dir,
  ]
  const spawn = (args: string[]) => {
    const child = start(args)
    children.push(child)
    return child
  }
  const api = (prefix: string, modules: ModuleFolder) =>
    listening(spawn(['serve', '--port', '0', '--run-jobs', 'false', ...flags(prefix, modules)]))
  const worker = async (prefix: string, modules: ModuleFolder) => {
    const child = spawn(['worker', '--worker-port', '0', ...flags(prefix, modules)])
    await listening(child)
    return child
  }
  const stop = async (child: Child) => {
    child.process.kill('SIGTERM')
    assert.equal(await child.exit, 0, `the worker stopped cleanly:\n${child.output()}`)
  }

  test('workers of 1.0.0 replaced one by one by workers of 1.0.0 and 1.1.0: every job runs on its pin', async () => {
    const prefix = freshPrefix()
    const [oldApi, newApi] = await Promise.all([api(prefix, old), api(prefix, both)])
    const oldWorkers = [await worker(prefix, old), await worker(prefix, old)]
    const created: Array<{ id: string; pin: string }> = []
    let loading = true
    const load = async (url: string, pin: string) => {
      for (let i = 0; loading; i++) {
        const response = await createJob(url, { algorithm: 'Adder', params: { a: i, b: 20 + (i % 5) * 20 } })
        assert.equal(response.status, 202, JSON.stringify(response.json))
        created.push({ id: response.json.job_id as string, pin })
        await sleep(25)
      }
    }
    const loads = Promise.all([load(oldApi, '1.0.0'), load(newApi, '1.1.0')])
    await sleep(STEP_MS)
    // No worker has 1.1.0 yet: its jobs wait, and none is taken by a worker of 1.0.0.
    const early = created.find(({ pin }) => pin === '1.1.0') as { id: string }
    assert.equal(((await (await fetch(`${newApi}/jobs/${early.id}`)).json()) as JobBody).status, 'pending')
    for (const retired of oldWorkers) {
      await worker(prefix, both)
      await sleep(STEP_MS)
      await stop(retired)
      await sleep(STEP_MS)
    }
    loading = false
    await loads
    const pins = new Set(created.map(({ pin }) => pin))
    assert.deepEqual([...pins].sort(), ['1.0.0', '1.1.0'])
    const ended = await Promise.all(created.map(({ id }) => waitForJob(newApi, id, undefined, 60_000)))
    const wrong = ended.flatMap((job, i) => {
      const { pin } = created[i] as { pin: string }
      const version = (job.metadata as { version?: string } | null)?.version
      return job.status === 'completed' && version === pin ? [] : [{ id: job.job_id, pin, job }]
    })
    assert.deepEqual(wrong, [], `of ${created.length} jobs, these did not complete on their pinned version`)
  })

  test('a job queued before versions (its bare name queue) runs on the default version of a worker', async () => {
    const prefix = freshPrefix()
    // What a release before versions wrote for a job: its BullMQ job in the queue of its algorithm's name,
    // without a version, its entry in the id → queue index, and the queue in the deployment's set.
    const client = new Redis(redis.url)
    const queue = new Queue('jobs.Adder', { connection: client, prefix })
    try {
      const id = '0123456789ab'
      await queue.add(
        'Adder',
        { params: '{"a":2,"b":3}', webhook: null, cheap: false },
        { jobId: id, attempts: 4, removeOnComplete: { age: 3600 }, removeOnFail: { age: 3600 } },
      )
      await client.hset(`${prefix}:algoserve:algorithm-of`, id, 'Adder')
      await client.sadd(`${prefix}:algoserve:algorithms`, 'Adder')
      const url = await api(prefix, both)
      assert.equal(((await (await fetch(`${url}/jobs/${id}`)).json()) as JobBody).status, 'pending')
      await worker(prefix, both)
      const job = await waitForJob(url, id)
      assert.equal(job.status, 'completed', JSON.stringify(job))
      assert.deepEqual(job.result, { sum: 5 })
      assert.equal((job.metadata as { version: string }).version, '1.1.0')
      // The counts read across the bare name's queue too.
      await until(async () => (await queue.getCompletedCount()) === 1, 5000, 'the job completed in its queue')
    } finally {
      await queue.close()
      client.disconnect()
    }
  })
})

// A worker cut off from Redis (in a network namespace of its own, its route to Redis blackholed) for
// longer than the lock, while it runs a job and sends a webhook: another worker takes both over; the
// cut-off worker stops its run once its lock lapses rather than finishing it unseen; each job ends once
// in the store; the webhook arrives twice with one webhook-id. Runs need root and `ip netns`.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import type { Config } from '../../../src/config.js'
import { startApp, type TestApp } from '../../helpers/app.js'
import { type Child, start } from '../../helpers/child.js'
import { createJob, waitForJob } from '../../helpers/jobs.js'
import { createNetns, type Netns, skipWithoutNetns } from '../../helpers/netns.js'
import { type Receiver, startReceiver } from '../../helpers/receiver.js'
import {
  freshPrefix,
  jobQueueOf,
  type RedisServer,
  skipWithoutRedis,
  startRedis,
} from '../../helpers/redis.js'
import { sleep, until } from '../../helpers/time.js'

const SLOW_COUNT = fileURLToPath(new URL('../../../examples/algorithms/slow-count.mjs', import.meta.url))
const LOCK_MS = 3000

describe('a worker cut off from Redis for longer than the lock', {
  skip: skipWithoutRedis || skipWithoutNetns,
  timeout: 120_000,
}, () => {
  let netns: Netns
  let redis: RedisServer
  let receiver: Receiver
  let app: TestApp
  let other: TestApp | undefined
  let appSettings: Partial<Config>
  const prefix = freshPrefix()
  const workers: Child[] = []
  const env = () => ({
    ALGOSERVE_REDIS_URL: `redis://${netns.host}:${redis.port}`,
    ALGOSERVE_REDIS_PREFIX: prefix,
    ALGOSERVE_JOB_LOCK_MS: String(LOCK_MS),
    ALGOSERVE_ALGORITHMS: SLOW_COUNT,
    ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'true',
    ALGOSERVE_WORKER_THREADS: '2',
    ALGOSERVE_JOB_CONCURRENCY: '2',
    ALGOSERVE_WORKER_PORT: '0',
    ALGOSERVE_LOG_LEVEL: 'info',
  })
  before(async () => {
    netns = createNetns()
    redis = await startRedis(['--bind', '127.0.0.1', netns.host, '--protected-mode', 'no'])
    // The first delivery is held unanswered (the worker is cut off meanwhile); the others answered.
    receiver = await startReceiver((n) => (n === 0 ? 'hang' : 204), netns.otherHost)
    appSettings = {
      redisUrl: redis.url,
      redisPrefix: prefix,
      jobLockMs: LOCK_MS,
      algorithms: [SLOW_COUNT],
      webhookAllowPrivate: true,
    }
    app = await startApp(appSettings)
  })
  after(async () => {
    await Promise.all(
      workers.map(async (worker) => {
        if (worker.process.exitCode === null && worker.process.signalCode === null) {
          worker.process.kill('SIGKILL')
          await worker.exit
        }
      }),
    )
    await other?.close()
    await app?.close()
    await receiver?.close()
    await redis?.close()
    netns?.close()
  })

  test('another worker takes over; the cut-off one stops its run; each job ends once; the webhook twice with one webhook-id', async (t) => {
    const cutOff = start(['worker'], env(), netns.exec)
    workers.push(cutOff)
    // Longer than the cut-off worker may run it before its lock lapses.
    const slow = await createJob(app.url, { algorithm: 'SlowCount', params: { to: 100, step_ms: 100 } })
    assert.equal(slow.status, 202, JSON.stringify(slow.json))
    const slowId = slow.json.job_id as string
    await waitForJob(app.url, slowId, (job) => job.status === 'running', 90_000)
    const hooked = await createJob(app.url, {
      algorithm: 'SlowCount',
      params: { to: 1, step_ms: 0 },
      webhook: receiver.url,
    })
    const hookedId = hooked.json.job_id as string
    await receiver.waitFor(1)

    netns.cut(netns.host)
    const cutAt = Date.now()
    // The other worker (in this process: it starts at once, where a process of its own could take
    // longer than the lock on a loaded machine).
    other = await startApp({ ...appSettings, runJobs: true })
    const startedAt = Date.now()
    const [first, second] = await receiver.waitFor(2, 60_000)
    const ended = await waitForJob(app.url, slowId, undefined, 60_000)
    assert.equal(ended.status, 'completed', JSON.stringify(ended))
    assert.deepEqual(ended.result, { counted: 100, complete: true })
    assert.equal((await waitForJob(app.url, hookedId)).status, 'completed')
    // The same delivery twice: receivers drop the copy by its webhook-id.
    assert.equal(first?.headers['webhook-id'], second?.headers['webhook-id'])
    assert.equal(JSON.parse(first?.body ?? '{}').job_id, hookedId)
    assert.equal(JSON.parse(second?.body ?? '{}').job_id, hookedId)
    const stopped = await until(
      () => cutOff.output().includes('a run is stopped') && cutOff.output().includes(slowId),
      10_000,
      () => `the cut-off worker said it stopped the run:\n${cutOff.output()}`,
    )
    assert.ok(stopped)
    t.diagnostic(
      `the other worker started ${startedAt - cutAt} ms after the cut; the slow job completed ${Date.now() - startedAt} ms after that`,
    )

    // Back in reach: the cut-off worker has no end of its own to write (it would be refused: the lock
    // is another's), and each job ended once.
    netns.heal(netns.host)
    await until(
      () => cutOff.output().includes('Redis is reachable again'),
      30_000,
      () => `the cut-off worker back in reach of Redis:\n${cutOff.output()}`,
    )
    await sleep(2 * LOCK_MS)
    assert.doesNotMatch(cutOff.output(), new RegExp(`Missing lock for job ${slowId}`))
    const client = new Redis(redis.url)
    try {
      const ends = async (queue: string, id: string) =>
        (await client.xrange(`${prefix}:${queue}:events`, '-', '+')).filter(([, fields]) => {
          const event = Object.fromEntries(
            fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1]]] : [])),
          )
          return event.jobId === id && (event.event === 'completed' || event.event === 'failed')
        }).length
      assert.equal(await ends(jobQueueOf('SlowCount', '1.0.0'), slowId), 1)
      assert.equal(await ends(jobQueueOf('SlowCount', '1.0.0'), hookedId), 1)
      assert.equal(await ends('webhooks', hookedId), 1)
    } finally {
      client.disconnect()
    }
    const deliveries = (await (await fetch(`${app.url}/jobs/${hookedId}/deliveries`)).json()) as {
      status?: string
    }
    t.diagnostic(`deliveries: ${JSON.stringify(deliveries)}`)
  })
})

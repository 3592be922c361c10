// Redis misbehaving in the two ways BullMQ's issue tracker reports losing work to: every client
// connection killed under the service's feet, and a full Redis refusing writes.
// The service on a redis-server of this file's own; what a client sees is checked, what the worker
// does is reported.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startApp, type TestApp } from '../../helpers/app.js'
import { createJob, waitForJob } from '../../helpers/jobs.js'
import { RSA_100 } from '../../helpers/numbers.js'
import {
  freshPrefix,
  PRIME_CHECKER_QUEUE,
  type RedisServer,
  redisCommand,
  skipWithoutRedis,
  startRedis,
} from '../../helpers/redis.js'
import { sleep, until } from '../../helpers/time.js'

describe('Redis limits', { skip: skipWithoutRedis }, () => {
  let redis: RedisServer
  let app: TestApp
  let prefix: string
  before(async () => {
    redis = await startRedis()
    prefix = freshPrefix()
    // Slow jobs stop at 1.5 s, so that some are running and some waiting when Redis fills up.
    app = await startApp({ redisUrl: redis.url, redisPrefix: prefix, runJobs: true, jobFactorBudgetMs: 1500 })
  })
  after(async () => {
    await app.close()
    await redis.close()
  })

  /** Posts until a 202, for the moments just after Redis dropped the service's connections. */
  async function accepted(url: string, number: number): Promise<string> {
    let last = 0
    return until(
      async () => {
        const created = await createJob(url, { algorithm: 'PrimeChecker', params: { number } })
        last = created.status
        return created.status === 202 && (created.json.job_id as string)
      },
      15_000,
      () => `POST /jobs answered 202 (last: ${last})`,
      50,
    )
  }

  test('CLIENT KILL TYPE normal, with the worker idle and with jobs in flight: every accepted job completes', {
    timeout: 90_000,
  }, async (t) => {
    // A job whose taking (moveToActive) ran in Redis but whose answer died with the connection is held
    // by no worker: BullMQ's stalled checker takes it back after its lock, within about twice the lock.
    // A short lock keeps that wait short; the wait below allows several times that bound.
    const lockMs = 2000
    const killPrefix = freshPrefix()
    const app = await startApp({
      redisUrl: redis.url,
      redisPrefix: killPrefix,
      runJobs: true,
      jobLockMs: lockMs,
    })
    t.after(() => app.close())
    const post = (number: number) => createJob(app.url, { algorithm: 'PrimeChecker', params: { number } })
    const first = await accepted(app.url, 97)
    assert.equal((await waitForJob(app.url, first)).status, 'completed')
    // Idle: the worker sits in its blocking wait for jobs, the read BullMQ once never recovered.
    await until(
      async () => (await redisCommand(redis.port, 'CLIENT LIST')).includes('cmd=bzpopmin'),
      5000,
      'a worker in its blocking wait',
    )
    const killed = await redisCommand(redis.port, 'CLIENT KILL TYPE normal')
    assert.ok(Number(killed.replace(/^:/, '')) >= 2, `connections killed: ${killed}`)
    const afterIdle = await accepted(app.url, 101)
    assert.equal((await waitForJob(app.url, afterIdle)).status, 'completed')

    // In flight: jobs posted until 150 are accepted while the connections are killed twice more. While
    // the API reconnects its POSTs answer 503 (it queues nothing for an absent Redis), as a client sees.
    const ids: string[] = []
    let refused = 0
    const posting = (async () => {
      const deadline = Date.now() + 40_000
      for (let i = 0; ids.length < 150; i++) {
        assert.ok(Date.now() < deadline, `only ${ids.length} jobs accepted in 40 s (${refused} refused)`)
        const created = await post(1_000_003 + 2 * i).catch(() => undefined)
        if (created?.status === 202) ids.push(created.json.job_id as string)
        else if (created?.status === 503) {
          refused++
          await sleep(20)
        } else assert.fail(`POST /jobs answered ${created?.status}`)
      }
    })()
    for (let kill = 0; kill < 2; kill++) {
      await until(() => ids.length >= 50 * (kill + 1), 30_000, `${50 * (kill + 1)} jobs accepted`)
      await redisCommand(redis.port, 'CLIENT KILL TYPE normal')
    }
    await posting
    const ended = await Promise.all(ids.map((id) => waitForJob(app.url, id, undefined, 15 * lockMs)))
    assert.deepEqual(
      ended.filter((job) => job.status !== 'completed').map((job) => job.job_id),
      [],
      'every accepted job completed',
    )
    let retaken = 0
    for (const id of ids) {
      if (Number(await redisCommand(redis.port, `HGET ${killPrefix}:${PRIME_CHECKER_QUEUE}:${id} stc`)) > 0)
        retaken++
    }
    const slowest = Math.max(
      ...ended.map((job) => Date.parse(job.completed_at as string) - Date.parse(job.created_at as string)),
    )
    t.diagnostic(
      `${ids.length} accepted and completed across 2 kills; ${refused} POSTs answered 503; ` +
        `${retaken} taken back by the stalled checker; slowest ${slowest} ms from creation to completion`,
    )
  })

  test('a full Redis (maxmemory, noeviction): POST answers 503 at once and creates nothing; accepted jobs complete once memory is back', {
    timeout: 90_000,
  }, async (t) => {
    const post = (number: number) => createJob(app.url, { algorithm: 'PrimeChecker', params: { number } })
    const slow: string[] = []
    for (let i = 0; i < 3; i++) {
      const created = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })
      assert.equal(created.status, 202)
      slow.push(created.json.job_id as string)
    }
    await waitForJob(app.url, slow[0] as string, (job) => job.status === 'running')
    const keysBefore = await redisCommand(redis.port, `KEYS ${prefix}:${PRIME_CHECKER_QUEUE}:*`)
    assert.equal(await redisCommand(redis.port, 'CONFIG SET maxmemory 1'), '+OK')
    const full = new Date().toISOString()
    t.after(() => redisCommand(redis.port, 'CONFIG SET maxmemory 0'))
    try {
      const times: number[] = []
      for (let i = 0; i < 5; i++) {
        const begun = performance.now()
        const created = await post(104_729 + i)
        times.push(performance.now() - begun)
        assert.equal(created.status, 503, `POST /jobs with Redis full answered ${created.status}`)
        assert.equal((created.json.detail as { error: string }).error, 'SERVICE_UNAVAILABLE')
        assert.match(created.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/)
      }
      t.diagnostic(`POST /jobs with Redis full: 503 in ${times.map((ms) => ms.toFixed(1)).join(', ')} ms`)
      const read = await fetch(`${app.url}/jobs/${slow[0]}`)
      t.diagnostic(`GET /jobs/{id} with Redis full: ${read.status}`)
      assert.ok(read.status === 200 || read.status === 503, `GET /jobs/{id} answered ${read.status}`)
      const ready = await fetch(`${app.url}/readyz`)
      t.diagnostic(`/readyz with Redis full: ${ready.status} ${await ready.text()}`)
      // Long enough for the running job to try to finish, and a waiting one to be taken, while full.
      await sleep(2500)
      const keysDuring = await redisCommand(redis.port, `KEYS ${prefix}:${PRIME_CHECKER_QUEUE}:*`)
      assert.equal(
        keysDuring.split('\n').filter((key) => /:jobs\.PrimeChecker:[0-9a-f]{12}$/.test(key)).length,
        keysBefore.split('\n').filter((key) => /:jobs\.PrimeChecker:[0-9a-f]{12}$/.test(key)).length,
        'no job was created by a refused POST',
      )
    } finally {
      await redisCommand(redis.port, 'CONFIG SET maxmemory 0')
    }
    t.diagnostic(`Redis full from ${full} to ${new Date().toISOString()}`)
    const ended = await Promise.all(slow.map((id) => waitForJob(app.url, id, undefined, 60_000)))
    assert.deepEqual(
      ended.map((job) => job.status),
      slow.map(() => 'completed'),
    )
    t.diagnostic(
      `the slow jobs ran ${ended.map((job) => `${job.started_at} to ${job.completed_at}`).join(', ')}`,
    )
    const later = await accepted(app.url, 13)
    assert.equal((await waitForJob(app.url, later)).status, 'completed')
  })
})

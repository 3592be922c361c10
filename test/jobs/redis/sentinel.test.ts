// Distributed mode through Sentinel: the service finds the primary by asking the sentinel, runs jobs
// on it, and after a failover (the replica promoted) goes on with the new primary without a restart.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startApp, type TestApp } from '../../helpers/app.js'
import { createJob, waitForJob } from '../../helpers/jobs.js'
import {
  freshPrefix,
  type RedisSentinelSet,
  redisCommand,
  skipWithoutRedis,
  startRedisSentinel,
} from '../../helpers/redis.js'
import { sleep, until } from '../../helpers/time.js'

describe('distributed mode through Sentinel', { skip: skipWithoutRedis, timeout: 60_000 }, () => {
  let set: RedisSentinelSet
  let app: TestApp
  before(async () => {
    set = await startRedisSentinel()
    app = await startApp({
      redisUrl: `redis://${set.sentinel}`,
      redisSentinels: [set.sentinel],
      redisSentinelName: set.name,
      redisPrefix: freshPrefix(),
      runJobs: true,
    })
  })
  after(async () => {
    await app?.close()
    await set?.close()
  })

  const runs = async (number: string) => {
    const created = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number } })
    assert.equal(created.status, 202, JSON.stringify(created.json))
    return waitForJob(app.url, created.json.job_id as string)
  }

  test('the primary is found through the sentinel: a job runs there', async () => {
    assert.equal((await runs('97')).status, 'completed')
    assert.notEqual(await redisCommand(set.primary.port, 'DBSIZE'), '0')
  })

  test('after a failover the service goes on with the promoted replica, without a restart', async () => {
    const done = await runs('89')
    // Replicated before the switch, so the job is on the replica too.
    await until(async () => (await redisCommand(set.replica.port, 'DBSIZE')) !== '0', 5000)
    const sentinelPort = Number(set.sentinel.split(':')[1])
    assert.equal(await redisCommand(sentinelPort, `SENTINEL FAILOVER ${set.name}`), '+OK')
    await until(
      async () =>
        (await redisCommand(sentinelPort, `SENTINEL GET-MASTER-ADDR-BY-NAME ${set.name}`)).endsWith(
          `\n${set.replica.port}`,
        ),
      15_000,
      'the replica promoted',
      50,
    )
    const job = await until(
      async () => {
        const created = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: '83' } })
        return created.status === 202 && created
      },
      15_000,
      'a 202 after the failover',
      200,
    )
    assert.equal((await waitForJob(app.url, job.json.job_id as string)).status, 'completed')
    assert.equal((await waitForJob(app.url, done.job_id)).status, 'completed')
  })
})

describe('a primary SIGKILLed under load, with ALGOSERVE_REDIS_MIN_REPLICAS=1', {
  skip: skipWithoutRedis,
  timeout: 60_000,
}, () => {
  let set: RedisSentinelSet
  let app: TestApp
  before(async () => {
    set = await startRedisSentinel(2)
    app = await startApp({
      redisUrl: `redis://${set.sentinel}`,
      redisSentinels: [set.sentinel],
      redisSentinelName: set.name,
      redisPrefix: freshPrefix(),
      redisMinReplicas: 1,
      runJobs: true,
    })
  })
  after(async () => {
    await app?.close()
    await set?.close()
  })

  test('answers are 202 or 503 with Retry-After, never a hang or a 500; ready again after the promotion; no job with a 202 lost', async (t) => {
    const accepted: string[] = []
    const statuses = new Map<number, number>()
    let killedAt = 0
    let firstAfter = 0
    const deadline = Date.now() + 25_000
    for (let n = 0; Date.now() < deadline; n++) {
      if (n === 20) {
        await set.primary.kill('SIGKILL')
        killedAt = Date.now()
      }
      const response = await fetch(`${app.url}/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ algorithm: 'PrimeChecker', params: { number: String(1000 + n) } }),
        signal: AbortSignal.timeout(10_000),
      })
      const body = (await response.json()) as { job_id?: string }
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
      assert.ok(
        response.status === 202 || response.status === 503,
        `${response.status} ${JSON.stringify(body)}`,
      )
      if (response.status === 503) {
        assert.ok(response.headers.get('retry-after'))
        await sleep(20)
      }
      if (response.status === 202) {
        accepted.push(body.job_id as string)
        if (killedAt > 0 && firstAfter === 0) firstAfter = Date.now()
        if (firstAfter > 0 && accepted.length >= 40) break
      }
    }
    assert.ok(firstAfter > 0, `no 202 after the kill: ${JSON.stringify([...statuses])}`)
    t.diagnostic(
      `first 202 ${firstAfter - killedAt} ms after the kill; answers ${JSON.stringify([...statuses])}`,
    )
    for (const id of accepted) {
      assert.equal((await waitForJob(app.url, id)).status, 'completed', id)
    }
  })
})

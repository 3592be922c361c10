// Distributed mode through Sentinel: the service finds the primary by asking the sentinel, runs jobs
// on it, and after a failover (the replica promoted) goes on with the new primary without a restart.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startApp, type TestApp } from '../../helpers/app.js'
import { failoverUnderLoad } from '../../helpers/failover.js'
import { createJob, waitForJob } from '../../helpers/jobs.js'
import {
  freshPrefix,
  type RedisSentinelSet,
  redisCommand,
  skipWithoutRedis,
  startRedisSentinel,
} from '../../helpers/redis.js'
import { until } from '../../helpers/time.js'

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

// Three sentinels (quorum two), as operators run them: the primary SIGKILLed while clients post jobs.
for (const minReplicas of [1, 0]) {
  describe(`a primary SIGKILLed under load, three sentinels, ALGOSERVE_REDIS_MIN_REPLICAS=${minReplicas}`, {
    skip: skipWithoutRedis,
    timeout: 90_000,
  }, () => {
    let set: RedisSentinelSet
    let app: TestApp
    before(async () => {
      set = await startRedisSentinel(2, 3)
      app = await startApp({
        redisUrl: `redis://${set.sentinel}`,
        redisSentinels: set.sentinels,
        redisSentinelName: set.name,
        redisPrefix: freshPrefix(),
        redisMinReplicas: minReplicas,
        runJobs: true,
        // A job taken or ended on the primary alone is running on the promoted replica, with a lock
        // that no worker renews: it runs again once the lock lapses.
        jobLockMs: 2000,
      })
    })
    after(async () => {
      await app?.close()
      await set?.close()
    })

    test(`202 or 503 with Retry-After, never a hang or a 500; ready within 10 s of the promotion; ${
      minReplicas > 0 ? 'no job with a 202 lost' : 'the jobs with a 202 lost are counted'
    }`, async (t) => {
      // The replicas cut off for the last second before the kill: what is written meanwhile is on the
      // primary alone.
      const run = await failoverUnderLoad(app.url, set, { lagMs: 1000 })
      t.diagnostic(
        `promoted ${run.promotionMs} ms after the kill; ready ${run.readyMs} ms and first 202 ${run.firstAcceptedMs} ms after the promotion; answers ${JSON.stringify(run.statuses)}; lost ${run.lost.length} of ${run.accepted.length} accepted`,
      )
      assert.deepEqual(run.unexpected, [])
      assert.ok(run.promotionMs !== undefined, 'a replica promoted')
      assert.ok(run.readyMs !== undefined && run.readyMs < 10_000, `ready ${run.readyMs} ms after`)
      assert.ok(
        run.firstAcceptedMs !== undefined && run.firstAcceptedMs < 10_000,
        `first 202 ${run.firstAcceptedMs} ms after`,
      )
      if (minReplicas > 0) assert.deepEqual(run.lost, [])
      for (const id of run.accepted.filter((id) => !run.lost.includes(id))) {
        assert.equal((await waitForJob(app.url, id, undefined, 30_000)).status, 'completed', id)
      }
    })
  })
}

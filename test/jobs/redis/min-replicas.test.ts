// ALGOSERVE_REDIS_MIN_REPLICAS: a 202 only once a replica holds the job (Redis's WAIT); with the replica
// gone, 503 with Retry-After after the bounded wait, never a hang.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { REPLICA_WAIT_MS } from '../../../src/jobs/redis/submit.js'
import { startApp, type TestApp } from '../../helpers/app.js'
import { createJob, waitForJob } from '../../helpers/jobs.js'
import {
  freshPrefix,
  type RedisServer,
  redisCommand,
  skipWithoutRedis,
  startRedis,
} from '../../helpers/redis.js'
import { until } from '../../helpers/time.js'

describe('ALGOSERVE_REDIS_MIN_REPLICAS', { skip: skipWithoutRedis, timeout: 60_000 }, () => {
  let primary: RedisServer
  let replica: RedisServer
  let app: TestApp
  before(async () => {
    primary = await startRedis()
    replica = await startRedis(['--replicaof', '127.0.0.1', String(primary.port)])
    await until(
      async () =>
        /master_link_status:up/.test(await redisCommand(replica.port, 'INFO replication').catch(() => '')) ||
        (await redisCommand(primary.port, 'WAIT 1 100')) === '1',
      10_000,
      'the replica in sync',
    )
    app = await startApp({
      redisUrl: primary.url,
      redisPrefix: freshPrefix(),
      redisMinReplicas: 1,
      runJobs: true,
    })
  })
  after(async () => {
    await app?.close()
    await primary?.close()
    await replica?.close()
  })

  test('a 202 once the replica holds the job; with the replica gone, 503 and Retry-After within the wait', async () => {
    const created = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: '97' } })
    assert.equal(created.status, 202, JSON.stringify(created.json))
    assert.equal((await waitForJob(app.url, created.json.job_id as string)).status, 'completed')

    await replica.kill('SIGKILL')
    const sent = Date.now()
    const response = await fetch(`${app.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'replica-gone-1' },
      body: JSON.stringify({ algorithm: 'PrimeChecker', params: { number: '89' } }),
    })
    const took = Date.now() - sent
    const body = await response.text()
    assert.equal(response.status, 503, body)
    assert.ok(response.headers.get('retry-after'), 'Retry-After')
    assert.match(body, /SERVICE_UNAVAILABLE/)
    // Not a hang: answered once the bounded wait is over (with a wide margin for a loaded machine).
    assert.ok(took < REPLICA_WAIT_MS + 5000, `answered after ${took} ms`)
  })
})

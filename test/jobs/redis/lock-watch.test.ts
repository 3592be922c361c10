// A worker that cannot reach Redis for longer than the lock stops its run. Redis is SIGSTOPped: its
// connections stay open and nothing answers, as in a partition, so BullMQ's renewals neither succeed nor
// fail. Once Redis is back the lock has lapsed, the stalled check puts the job back, and the job runs
// again and ends once. (test/jobs/redis/partition.test.ts cuts one worker off in a network namespace.)
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { startApp, type TestApp } from '../../helpers/app.js'
import { createJob, waitForJob } from '../../helpers/jobs.js'
import {
  freshPrefix,
  jobQueueOf,
  type RedisServer,
  skipWithoutRedis,
  startRedis,
} from '../../helpers/redis.js'
import { sleep, until } from '../../helpers/time.js'

const SLOW_COUNT = fileURLToPath(new URL('../../../examples/algorithms/slow-count.mjs', import.meta.url))
const LOCK_MS = 1500

describe('a run whose lock cannot be renewed', { skip: skipWithoutRedis, timeout: 60_000 }, () => {
  let redis: RedisServer
  let app: TestApp
  const prefix = freshPrefix()
  const lines: Array<{ msg?: string; job_id?: string }> = []
  before(async () => {
    redis = await startRedis()
    app = await startApp(
      {
        redisUrl: redis.url,
        redisPrefix: prefix,
        jobLockMs: LOCK_MS,
        algorithms: [SLOW_COUNT],
        runJobs: true,
      },
      { logger: { level: 'warn', stream: { write: (line: string) => lines.push(JSON.parse(line)) } } },
    )
  })
  after(async () => {
    redis?.process.kill('SIGCONT')
    await app?.close()
    await redis?.close()
  })

  test('is stopped once the lock has lapsed, and the job runs again and ends once', async () => {
    const created = await createJob(app.url, { algorithm: 'SlowCount', params: { to: 60, step_ms: 100 } })
    const id = created.json.job_id as string
    await waitForJob(app.url, id, (job) => job.status === 'running', 30_000)
    redis.process.kill('SIGSTOP')
    const stopped = await until(
      () => lines.find((line) => line.job_id === id && /a run is stopped/.test(line.msg ?? '')),
      4 * LOCK_MS + 5000,
      () => `the run stopped; log: ${JSON.stringify(lines)}`,
    ).finally(() => redis.process.kill('SIGCONT'))
    assert.ok(stopped)
    const ended = await waitForJob(app.url, id, undefined, 40_000)
    assert.equal(ended.status, 'completed', JSON.stringify(ended))
    assert.deepEqual(ended.result, { counted: 60, complete: true })
    await sleep(LOCK_MS)
    assert.equal(
      lines.filter((line) => /Missing lock/.test(JSON.stringify(line))).length,
      0,
      JSON.stringify(lines),
    )
    const client = new Redis(redis.url)
    try {
      const ends = (
        await client.xrange(`${prefix}:${jobQueueOf('SlowCount', '1.0.0')}:events`, '-', '+')
      ).filter(([, fields]) => {
        const at = fields.indexOf('jobId')
        return fields[at + 1] === id && (fields.includes('completed') || fields.includes('failed'))
      })
      assert.equal(ends.length, 1)
    } finally {
      client.disconnect()
    }
  })
})

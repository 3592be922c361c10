// While the job store cannot be read (Redis stopped), /metrics says so: jobs_waiting and jobs_running
// are NaN, not the last counts read (a backlog nobody can see), and algoserve_ready is 0 with /readyz.
// Both come back when Redis does; algoserve_ready is 0 too from the start of a shutdown.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startApp, type TestApp } from '../helpers/app.js'
import { createJob } from '../helpers/jobs.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../helpers/redis.js'
import { until } from '../helpers/time.js'

/** The three gauges' samples as written (NaN in any case, as Prometheus reads it, written NaN). */
async function scrape(url: string): Promise<Record<string, string>> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const value = (name: string) =>
    (new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 'absent').replace(/^nan$/i, 'NaN')
  return {
    waiting: value('jobs_waiting\\{algorithm="PrimeChecker"\\}'),
    running: value('jobs_running\\{algorithm="PrimeChecker"\\}'),
    ready: value('algoserve_ready'),
  }
}

describe('the job gauges and algoserve_ready while Redis is away', { skip: skipWithoutRedis }, () => {
  let redis: RedisServer
  let server: TestApp
  before(async () => {
    redis = await startRedis()
    // No job runs here: the jobs created stay waiting.
    server = await startApp({ redisUrl: redis.url, redisPrefix: freshPrefix(), runJobs: false })
  })
  after(async () => {
    await server?.close()
    await redis?.close()
  })

  test('known counts, then NaN while Redis is stopped, then the counts again', async () => {
    for (const number of [97, 91]) {
      const { status } = await createJob(server.url, { algorithm: 'PrimeChecker', params: { number } })
      assert.equal(status, 202)
    }
    assert.deepEqual(await scrape(server.url), { waiting: '2', running: '0', ready: '1' })

    await redis.kill('SIGTERM')
    await until(async () => (await fetch(`${server.url}/readyz`)).status === 503, 10_000, '/readyz at 503')
    assert.deepEqual(await scrape(server.url), { waiting: 'NaN', running: 'NaN', ready: '0' })

    await redis.restart()
    await until(
      async () => JSON.stringify(await scrape(server.url)) === '{"waiting":"2","running":"0","ready":"1"}',
      20_000,
      'the counts back from Redis',
    )
  })

  test('algoserve_ready is 0 from the start of a shutdown', async () => {
    const closing = server.service.shutdown(5000, 500)
    assert.equal((await scrape(server.url)).ready, '0')
    await closing
  })
})

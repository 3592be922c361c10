// A shutdown ends within drain delay + grace + the documented margin whatever Redis does: `worker` and
// `serve` (running jobs) against a port where nothing listens, and against a Redis stopped mid-run.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { SHUTDOWN_MARGIN_MS } from '../src/service.js'
import { type Child, listening, start } from './helpers/child.js'
import { freePort, freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from './helpers/redis.js'

const GRACE_MS = 1000
const flags = ['--shutdown-grace-ms', String(GRACE_MS), '--drain-delay-ms', '0']
// The bound the docs give, and a second for the child's own exit and the test's reading of it.
const BOUND_MS = GRACE_MS + SHUTDOWN_MARGIN_MS + 1000

const roles = {
  worker: ['worker', '--worker-port', '0'],
  serve: ['serve', '--port', '0', '--run-jobs', 'true'],
} as const

async function stopsInTime(child: Child): Promise<void> {
  const sent = Date.now()
  child.process.kill('SIGTERM')
  const timer = setTimeout(() => child.process.kill('SIGKILL'), BOUND_MS + 10_000)
  const code = await child.exit
  clearTimeout(timer)
  const took = Date.now() - sent
  assert.ok(took <= BOUND_MS, `exited ${took} ms after SIGTERM (bound ${BOUND_MS} ms):\n${child.output()}`)
  assert.equal(code, 0, child.output())
  assert.match(child.output(), /shutdown complete/)
}

describe('shutdown with Redis away', { skip: skipWithoutRedis, timeout: 120_000 }, () => {
  for (const [role, args] of Object.entries(roles)) {
    test(`${role}: Redis never reachable (a closed port)`, async () => {
      const port = await freePort()
      const child = start([...args, ...flags], {
        ALGOSERVE_REDIS_URL: `redis://127.0.0.1:${port}`,
        ALGOSERVE_REDIS_PREFIX: freshPrefix(),
      })
      await listening(child)
      await stopsInTime(child)
    })

    test(`${role}: Redis stopped while it runs`, async () => {
      const redis: RedisServer = await startRedis()
      after(() => redis.close())
      const child = start([...args, ...flags], {
        ALGOSERVE_REDIS_URL: redis.url,
        ALGOSERVE_REDIS_PREFIX: freshPrefix(),
      })
      await listening(child)
      // Ready: its Workers have taken their connections and wait for jobs.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      await redis.kill('SIGKILL')
      await new Promise((resolve) => setTimeout(resolve, 500))
      await stopsInTime(child)
    })
  }
})

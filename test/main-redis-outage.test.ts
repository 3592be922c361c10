// What `worker` and `serve` say of a Redis that goes away and comes back: one JSON warning with the
// error's code and the address (never the password), one line when it is back, and nothing of BullMQ's
// or ioredis's raw on stderr. A Redis that evicts keys is named once, in the log.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { type Child, listening, start } from './helpers/child.js'
import { freePort, freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from './helpers/redis.js'
import { sleep, until } from './helpers/time.js'

const PASSWORD = 'outage-test-s3cret'
const LOST = 'Redis cannot be reached: jobs answer 503 until it can'
const BACK = 'Redis is reachable again'

const roles = {
  worker: ['worker', '--worker-port', '0'],
  serve: ['serve', '--port', '0'],
} as const

/** Every line of the log (stdout), parsed: a line that is not JSON fails the test. */
function logLines(child: Child): Array<Record<string, unknown>> {
  const stderr = new Set(child.stderr().split('\n'))
  const parsed: Array<Record<string, unknown>> = []
  for (const line of child.output().split('\n')) {
    if (line === '' || stderr.has(line)) continue
    try {
      parsed.push(JSON.parse(line) as Record<string, unknown>)
    } catch {
      assert.fail(`a line that is not JSON: ${line}`)
    }
  }
  return parsed
}

async function stop(child: Child): Promise<void> {
  child.process.kill('SIGTERM')
  await child.exit
}

describe('logging a Redis outage', { skip: skipWithoutRedis, timeout: 60_000 }, () => {
  for (const [role, args] of Object.entries(roles)) {
    test(`${role}: one warning when Redis goes, one line when it is back, nothing raw on stderr`, async () => {
      const redis: RedisServer = await startRedis(['--requirepass', PASSWORD])
      after(() => redis.close())
      const child = start([...args, '--shutdown-grace-ms', '500', '--drain-delay-ms', '0'], {
        ALGOSERVE_REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${redis.port}`,
        ALGOSERVE_REDIS_PREFIX: freshPrefix(),
      })
      await listening(child)
      await sleep(1000)
      await redis.kill('SIGKILL')
      // Long enough for every connection to fail several reconnections.
      await sleep(4000)
      await redis.restart()
      await until(
        () => child.output().includes(BACK),
        15_000,
        () => `"${BACK}":\n${child.output()}`,
      )
      await stop(child)

      assert.equal(child.stderr(), '', 'nothing raw on stderr')
      assert.ok(!child.output().includes(PASSWORD), 'the password never appears')
      const lines = logLines(child)
      const lost = lines.filter((line) => line.msg === LOST)
      assert.equal(lost.length, 1, child.output())
      assert.equal(lost[0]?.level, 40)
      assert.equal(lost[0]?.redis, `127.0.0.1:${redis.port}`)
      assert.match(String(lost[0]?.code), /^E[A-Z]+$/)
      const back = lines.filter((line) => line.msg === BACK)
      assert.equal(back.length, 1, child.output())
      assert.equal(back[0]?.level, 30)
      assert.equal(lines.filter((line) => (line.level as number) >= 40).length, 1, child.output())
    })
  }

  test("a Redis that evicts keys, come after the start: named once in the log, BullMQ's notice not on stderr", async () => {
    const port = await freePort()
    const child = start(
      ['worker', '--worker-port', '0', '--shutdown-grace-ms', '500', '--drain-delay-ms', '0'],
      {
        ALGOSERVE_REDIS_URL: `redis://127.0.0.1:${port}`,
        ALGOSERVE_REDIS_PREFIX: freshPrefix(),
      },
    )
    await listening(child)
    // Every connection of BullMQ's meets this Redis for the first time, and checks it.
    const evicting = await startRedis(['--maxmemory-policy', 'allkeys-lru'], port)
    after(() => evicting.close())
    await until(
      () => child.output().includes('Redis evicts keys'),
      15_000,
      () => child.output(),
    )
    await sleep(2000)
    await stop(child)

    assert.equal(child.stderr(), '', 'nothing raw on stderr')
    const lines = logLines(child)
    const ours = lines.filter((line) =>
      /^Redis evicts keys \(maxmemory-policy allkeys-lru\)/.test(String(line.msg)),
    )
    assert.equal(ours.length, 1, child.output())
    const bullmq = lines.filter((line) => /Eviction policy is allkeys-lru/.test(String(line.msg)))
    assert.equal(bullmq.length, 1, child.output())
    assert.equal(bullmq[0]?.component, 'library')
  })
})

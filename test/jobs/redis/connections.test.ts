// Opening the Redis backend's connections: a process listens only once the store is usable, however
// slow a connection is to come up, and at once when Redis is away. A real redis-server, reached through
// a real TCP relay that holds back every connection but the first.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { StoreUnavailableError } from '../../../src/errors.js'
import { type RedisBackendOptions, RedisConnections } from '../../../src/jobs/redis/connections.js'
import { SUITE_VERSIONS, silentLog } from '../../helpers/backends.js'
import { freePort, freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../../helpers/redis.js'
import { tcpRelay } from '../../helpers/tcp-relay.js'

/** Every connection after the first reaches Redis only this long after it is made. */
const HELD_MS = 1500

function settings(url: string): RedisBackendOptions {
  return {
    url,
    prefix: freshPrefix(),
    lockMs: 2000,
    versions: SUITE_VERSIONS,
    ttlMs: 60_000,
    maxPending: 100,
    retryWaitsMs: [1000],
    countEnded: () => {},
    log: silentLog,
  }
}

describe('opening the connections', { skip: skipWithoutRedis }, () => {
  let redis: RedisServer
  before(async () => {
    redis = await startRedis()
  })
  after(() => redis.close())

  test('with a connection slow to come up, open() returns only once the store is usable', {
    timeout: 30_000,
  }, async (t) => {
    const relay = await tcpRelay(redis.port, { holdMs: (n) => (n === 0 ? 0 : HELD_MS) })
    const connections = new RedisConnections(settings(`redis://127.0.0.1:${relay.port}`))
    t.after(async () => {
      await connections.close()
      await relay.close()
    })
    await connections.open()
    assert.doesNotThrow(() => connections.usable())
    assert.equal(await connections.ping(), true)
  })

  test('with Redis away, open() returns long before its wait, and the store answers unavailable', {
    timeout: 30_000,
  }, async (t) => {
    const connections = new RedisConnections(settings(`redis://127.0.0.1:${await freePort()}`))
    t.after(() => connections.close())
    // Were a connection's failure not heard, this would wait the minute and the test time out.
    await connections.open(60_000)
    assert.throws(() => connections.usable(), StoreUnavailableError)
    assert.equal(await connections.ping(), false)
  })
})

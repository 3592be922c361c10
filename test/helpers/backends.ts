// One suite, two backends: `forEachBackend` runs a suite once on the embedded store and once on Redis
// (a redis-server of the file's own, a fresh key prefix for each app), each under a describe that
// names the backend. Without a redis-server the Redis half is skipped, saying so.
import { after, before, describe } from 'node:test'
import type { Config } from '../../src/config.js'
import type { ServiceOptions } from '../../src/service.js'
import { startApp, type TestApp } from './app.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from './redis.js'

export interface BackendUnderTest {
  name: 'embedded' | 'redis'
  /** Starts the service, running jobs, on this backend. */
  start(overrides?: Partial<Config>, options?: ServiceOptions): Promise<TestApp>
}

export function forEachBackend(suite: (backend: BackendUnderTest) => void): void {
  describe('embedded', () => suite({ name: 'embedded', start: startApp }))
  describe('redis', { skip: skipWithoutRedis }, () => {
    let redis: RedisServer | undefined
    before(async () => {
      redis = await startRedis()
    })
    suite({
      name: 'redis',
      start: (overrides = {}, options = {}) =>
        startApp(
          { redisUrl: redis?.url ?? null, redisPrefix: freshPrefix(), runJobs: true, ...overrides },
          options,
        ),
    })
    // Registered after the suite's own hooks, so its apps close while Redis is still there.
    after(() => redis?.close())
  })
}

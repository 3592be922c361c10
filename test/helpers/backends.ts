// One suite, every backend. `forEachBackend` runs a suite once on the embedded store and once on Redis
// (a redis-server of the file's own, a fresh key prefix for each app), each under a describe that
// names the backend: for suites that go through HTTP. `forEachJobBackend` does the same one level down,
// for suites of the JobBackend seam itself: one factory opens either backend with the same settings.
// Without a redis-server the Redis half is skipped, saying so. Under CI's matrix entry with several HTTP
// processes (served.ts), `serve` starts them in a child process.
import { rmSync } from 'node:fs'
import { after, before, describe } from 'node:test'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { versionKey } from '../../src/algorithms/registry.js'
import type { Config } from '../../src/config.js'
import type { BackendOptions, JobBackend, JobEndStatus, LoadedVersions } from '../../src/jobs/backend.js'
import { openEmbeddedBackend } from '../../src/jobs/embedded/backend.js'
import { RedisBackend } from '../../src/jobs/redis/backend.js'
import type { ServiceOptions } from '../../src/service.js'
import { startApp, type TestApp, tempDataDir } from './app.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from './redis.js'
import { HTTP_PROCESSES_VARIABLE, type ServedApp, serveApp, TEST_HTTP_PROCESSES } from './served.js'

export interface BackendUnderTest {
  name: 'embedded' | 'redis'
  /** Starts the service, running jobs, on this backend, in this process (for tests of its internals). */
  start(overrides?: Partial<Config>, options?: ServiceOptions): Promise<TestApp>
  /** Starts the service, running jobs, on this backend, for tests that reach it through HTTP only. */
  serve(overrides?: Partial<Config>): Promise<ServedApp>
  /** The settings that put `algoserve serve` in a child process on this backend, running jobs. */
  childEnv(): Record<string, string>
}

// With several HTTP processes the embedded store refuses to start.
const embeddedSkip =
  TEST_HTTP_PROCESSES > 1 ? `the embedded store serves one HTTP process (${HTTP_PROCESSES_VARIABLE})` : false

export function forEachBackend(suite: (backend: BackendUnderTest) => void): void {
  describe('embedded', { skip: embeddedSkip }, () =>
    suite({ name: 'embedded', start: startApp, serve: serveApp, childEnv: () => ({}) }),
  )
  describe('redis', { skip: skipWithoutRedis }, () => {
    let redis: RedisServer | undefined
    before(async () => {
      redis = await startRedis()
    })
    const onRedis = () => ({ redisUrl: redis?.url ?? null, redisPrefix: freshPrefix(), runJobs: true })
    suite({
      name: 'redis',
      start: (overrides = {}, options = {}) => startApp({ ...onRedis(), ...overrides }, options),
      serve: (overrides = {}) => serveApp({ ...onRedis(), ...overrides }),
      childEnv: () => ({
        ALGOSERVE_REDIS_URL: redis?.url ?? '',
        ALGOSERVE_REDIS_PREFIX: freshPrefix(),
        ALGOSERVE_RUN_JOBS: 'true',
      }),
    })
    // Registered after the suite's own hooks, so its apps close while Redis is still there.
    after(() => redis?.close())
  })
}

/** What a suite may set of a backend's options; the rest are the service's defaults. */
export type BackendSettings = Partial<Pick<BackendOptions, 'ttlMs' | 'maxPending' | 'retryWaitsMs'>>

export interface OpenedBackend {
  backend: JobBackend
  /** Every job end the backend counted (its CountEnded), in order. */
  ends: { algorithm: string; status: JobEndStatus; seconds: number }[]
  /** Closes the backend (stop its consumers first) and removes what it kept. */
  close(): Promise<void>
}

export interface JobBackendFactory {
  name: 'embedded' | 'redis'
  open(settings?: BackendSettings): Promise<OpenedBackend>
}

/** The algorithms of the jobs the job backend suites submit. */
export const SUITE_ALGORITHMS = ['Echo', 'Other']

/** The one version of the suites' jobs. */
export const SUITE_VERSION = '1.0.0'

/** The suites' versions by versionKey: a Redis backend's queues. */
export const SUITE_VERSIONS = SUITE_ALGORITHMS.map((name) => versionKey(name, SUITE_VERSION))

/** What a consumer of the suites' jobs reads of the loaded versions: SUITE_VERSION of each. */
export const SUITE_LOADED: LoadedVersions = {
  names: () => [...SUITE_ALGORITHMS],
  versions: () => [{ version: SUITE_VERSION, concurrency: null }],
  defaultOf: () => ({ version: SUITE_VERSION }),
  onChange: () => {},
}

export const silentLog = pino({ level: 'silent' }) as unknown as FastifyBaseLogger

export function forEachJobBackend(suite: (factory: JobBackendFactory) => void): void {
  const options = (settings: BackendSettings, ends: OpenedBackend['ends']): BackendOptions => ({
    ttlMs: 60_000,
    maxPending: 1000,
    retryWaitsMs: [50, 50, 50],
    countEnded: (algorithm, status, seconds) => ends.push({ algorithm, status, seconds }),
    log: silentLog,
    ...settings,
  })
  describe('embedded', () =>
    suite({
      name: 'embedded',
      async open(settings = {}) {
        const ends: OpenedBackend['ends'] = []
        const dataDir = tempDataDir()
        const backend = openEmbeddedBackend({ ...options(settings, ends), dataDir })
        return {
          backend,
          ends,
          async close() {
            await backend.close()
            rmSync(dataDir, { recursive: true, force: true })
          },
        }
      },
    }))
  describe('redis', { skip: skipWithoutRedis }, () => {
    let redis: RedisServer | undefined
    before(async () => {
      redis = await startRedis()
    })
    suite({
      name: 'redis',
      async open(settings = {}) {
        const ends: OpenedBackend['ends'] = []
        const backend = new RedisBackend({
          ...options(settings, ends),
          url: redis?.url as string,
          prefix: freshPrefix(),
          lockMs: 2000,
          versions: SUITE_VERSIONS,
        })
        await backend.open()
        return { backend, ends, close: () => backend.close() }
      },
    })
    after(() => redis?.close())
  })
}

/** An API process that runs no jobs and an `algoserve worker`, on one Redis. */
export interface ApiAndWorker {
  readonly api: TestApp
  readonly worker: TestApp
}

/**
 * Starts, for the suite it is called in, a redis-server of its own with an API process (runJobs false)
 * and an `algoserve worker` sharing it, both with `overrides`; closes them after.
 */
export function apiAndWorker(overrides: Partial<Config>): ApiAndWorker {
  let redis: RedisServer | undefined
  let api: TestApp | undefined
  let worker: TestApp | undefined
  before(async () => {
    redis = await startRedis()
    const shared = { redisUrl: redis.url, redisPrefix: freshPrefix(), ...overrides }
    api = await startApp({ ...shared, runJobs: false })
    worker = await startApp(shared, { role: 'worker' })
  })
  after(async () => {
    await worker?.close()
    await api?.close()
    await redis?.close()
  })
  const started = (app: TestApp | undefined) => {
    if (app === undefined) throw new Error("the processes are started in the suite's before")
    return app
  }
  return {
    get api() {
      return started(api)
    },
    get worker() {
      return started(worker)
    },
  }
}

import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  type Config,
  defaultConfig,
  flagName,
  loadConfig,
  SETTINGS,
  shownDefault,
  unknownSettings,
} from '../src/config.js'
import { ConfigError } from '../src/errors.js'

// Compile-time: Config's members take their types from the table's parsers (typecheck fails otherwise).
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const typedFromTheTable: [
  Same<Config['port'], number>,
  Same<Config['logLevel'], 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'>,
  Same<Config['webhookSecret'], string | null>,
  Same<Config['corsOrigins'], string[]>,
  Same<Config['trustProxy'], boolean>,
] = [true, true, true, true, true]

test('every setting of the table is a member of the config, and nothing else', () => {
  assert.ok(typedFromTheTable.every(Boolean))
  assert.deepEqual(Object.keys(defaultConfig()).sort(), SETTINGS.map((s) => s.key).sort())
})

test('the defaults are these values', () => {
  assert.deepEqual(loadConfig([], {}), {
    host: '127.0.0.1',
    port: 8000,
    dataDir: './data',
    maxDigits: 4300,
    maxBodyBytes: 1_048_576,
    invokeFactorBudgetMs: 2000,
    workerThreads: 0,
    httpProcesses: 1,
    shutdownGraceMs: 30_000,
    logLevel: 'info',
    jobFactorBudgetMs: 60_000,
    jobTimeoutMs: 300_000,
    jobConcurrency: 0,
    jobTtlSeconds: 86_400,
    maxPendingJobs: 10_000,
    maxJobWaiters: 1000,
    maxEventStreams: 10_000,
    webhookSecret: null,
    webhookAllowPrivate: false,
    webhookReceiverMaxInFlight: 128,
    redisUrl: null,
    redisPrefix: 'algoserve',
    redisClusterNodes: [],
    redisSentinels: [],
    redisSentinelName: null,
    redisTlsCaFile: null,
    redisMinReplicas: 0,
    workerPort: 8001,
    runJobs: false,
    jobLockMs: 30_000,
    apiKeys: [],
    apiKeysFile: null,
    apiKeysForMetrics: false,
    apiKeysForDocs: false,
    corsOrigins: [],
    rateLimit: 0,
    rateLimitWindowMs: 60_000,
    trustProxy: false,
    maxJsonDepth: 32,
    maxJsonValues: 10_000,
    maxStringLength: 1_048_576,
    maxBodyBytesCeiling: 16_777_216,
    maxJsonValuesCeiling: 1_000_000,
    maxJsonDepthCeiling: 256,
    maxStringLengthCeiling: 16_777_216,
    maxDigitsCeiling: 100_000,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    maxBufferedBodyBytes: 67_108_864,
    invokeQueueTimeoutMs: 2_000,
    drainDelayMs: 5_000,
    algorithms: [],
    defaultVersions: new Map(),
    deprecatedVersions: new Map(),
    workerAlgorithms: [],
    invokeTimeoutMs: 30_000,
    threadHeapMb: 0,
    algorithmMemoryMb: 0,
    primeChecker: true,
    watch: false,
    apiTitle: null,
    apiVersion: null,
    apiDescription: null,
  })
  assert.deepEqual(loadConfig([], {}), defaultConfig())
})

const settingsDoc = () => readFileSync(new URL('../docs/settings.md', import.meta.url), 'utf8')

test("docs/settings.md's tables list every setting with its flag and default, and nothing else", () => {
  const rows = [...settingsDoc().matchAll(/^\| `(ALGOSERVE_[A-Z_]+)` \| `(--[a-z-]+)` \| `?([^|`]*?)`? \|/gm)]
  const documented = new Map(rows.map(([, env, flag, value]) => [env, { flag, value }]))
  for (const s of SETTINGS) {
    assert.deepEqual(
      documented.get(s.env),
      { flag: flagName(s.env), value: shownDefault(s.default) },
      `docs/settings.md row of ${s.env}`,
    )
  }
  assert.deepEqual([...documented.keys()].sort(), SETTINGS.map((s) => s.env).sort())
})

test("docs/settings.md's ranges of whole numbers are the ones the settings accept", () => {
  const rows = [
    ...settingsDoc().matchAll(/^\| `(ALGOSERVE_[A-Z_]+)` \|[^|]*\|[^|]*\| ([0-9]+) to ([0-9]+) \|/gm),
  ]
  assert.ok(rows.length >= 20, `${rows.length} ranges found`)
  for (const [, env, min, max] of rows) {
    const accepts = (value: bigint) => {
      try {
        // The Redis settings, and several HTTP processes, need a Redis URL beside them.
        const redis =
          env?.startsWith('ALGOSERVE_REDIS_') || env === 'ALGOSERVE_HTTP_PROCESSES'
            ? { ALGOSERVE_REDIS_URL: 'redis://127.0.0.1:6379' }
            : {}
        loadConfig([], { ...redis, [env as string]: String(value) })
        return true
      } catch {
        return false
      }
    }
    const [low, high] = [BigInt(min as string), BigInt(max as string)]
    assert.ok(accepts(low) && accepts(high), `${env} accepts ${low} and ${high}`)
    assert.ok(
      !accepts(high + 1n) && (low === 0n || !accepts(low - 1n)),
      `${env} refuses past ${low}..${high}`,
    )
  }
})

test('environment variables set values, and flags win over them', () => {
  const env = { ALGOSERVE_PORT: '9000', ALGOSERVE_MAX_DIGITS: '100', ALGOSERVE_LOG_LEVEL: 'DEBUG' }
  const config = loadConfig(['--port', '9001', '--invoke-factor-budget-ms=50'], env)
  assert.equal(config.port, 9001)
  assert.equal(config.maxDigits, 100)
  assert.equal(config.invokeFactorBudgetMs, 50)
  assert.equal(config.logLevel, 'debug')
})

test('webhook settings: a Standard Webhooks secret and a boolean', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
  const config = loadConfig(['--webhook-allow-private', 'true'], { ALGOSERVE_WEBHOOK_SECRET: secret })
  assert.equal(config.webhookSecret, secret)
  assert.equal(config.webhookAllowPrivate, true)
  assert.equal(loadConfig([], { ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'no' }).webhookAllowPrivate, false)
  for (const bad of ['secret', 'whsec_', 'whsec_!!!!', `whsec_${Buffer.alloc(8).toString('base64')}`]) {
    assert.throws(() => loadConfig([], { ALGOSERVE_WEBHOOK_SECRET: bad }), /ALGOSERVE_WEBHOOK_SECRET/, bad)
  }
  assert.throws(() => loadConfig([], { ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'maybe' }), /must be true or false/)
  assert.throws(
    () => loadConfig(['--job-timeout-ms', '0'], {}),
    /--job-timeout-ms \(ALGOSERVE_JOB_TIMEOUT_MS\)/,
  )
})

test('a boolean flag alone is true; a boolean word after it, or after =, is its value', () => {
  const read = (...args: string[]) => {
    const config = loadConfig(args, { ALGOSERVE_RUN_JOBS: 'false' })
    return [config.runJobs, config.webhookAllowPrivate, config.port]
  }
  assert.deepEqual(read('--run-jobs'), [true, false, 8000])
  assert.deepEqual(read('--run-jobs', '--webhook-allow-private'), [true, true, 8000])
  assert.deepEqual(read('--webhook-allow-private', '--port', '9000'), [false, true, 9000])
  assert.deepEqual(read('--run-jobs', 'false', '--webhook-allow-private', 'YES'), [false, true, 8000])
  assert.deepEqual(read('--run-jobs=0', '--port=1'), [false, false, 1])
  // Anything else after a boolean flag is an argument of its own, and none is expected.
  assert.throws(() => read('--run-jobs', 'maybe'), /Unknown argument 'maybe'/)
  assert.throws(
    () => read('--run-jobs=maybe'),
    /--run-jobs \(ALGOSERVE_RUN_JOBS\)="maybe": must be true or false/,
  )
})

test('flag names follow the environment names', () => {
  assert.equal(flagName('ALGOSERVE_MAX_BODY_BYTES'), '--max-body-bytes')
})

test('a bad value is refused with a message naming the setting', () => {
  const cases: [string[], Record<string, string>, RegExp][] = [
    [[], { ALGOSERVE_PORT: 'eighty' }, /ALGOSERVE_PORT/],
    [[], { ALGOSERVE_PORT: '70000' }, /ALGOSERVE_PORT.*0 to 65535/],
    [[], { ALGOSERVE_MAX_DIGITS: '0' }, /ALGOSERVE_MAX_DIGITS/],
    [[], { ALGOSERVE_MAX_BODY_BYTES: '-1' }, /ALGOSERVE_MAX_BODY_BYTES/],
    [[], { ALGOSERVE_LOG_LEVEL: 'loud' }, /ALGOSERVE_LOG_LEVEL.*one of/],
    [[], { ALGOSERVE_HOST: ' ' }, /ALGOSERVE_HOST/],
    [['--port', '1.5'], {}, /--port \(ALGOSERVE_PORT\)/],
    [['--invoke-factor-budget-ms'], {}, /--invoke-factor-budget-ms.*needs a value/],
    [['--colour', 'red'], {}, /Unknown argument '--colour'/],
  ]
  for (const [args, env, message] of cases) {
    assert.throws(
      () => loadConfig(args, env),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, message)
        return true
      },
    )
  }
})

test('distributed-mode settings: a redis:// or rediss:// URL, a prefix without colons, a lock of 1 s or more', () => {
  const config = loadConfig(['--redis-url', 'rediss://user:pw@redis.example:6380/2', '--run-jobs', 'true'], {
    ALGOSERVE_REDIS_PREFIX: 'prod-1',
    ALGOSERVE_JOB_LOCK_MS: '5000',
  })
  assert.equal(config.redisUrl, 'rediss://user:pw@redis.example:6380/2')
  assert.equal(config.redisPrefix, 'prod-1')
  assert.equal(config.jobLockMs, 5000)
  assert.equal(config.runJobs, true)
  assert.equal(loadConfig([], { ALGOSERVE_REDIS_URL: '' }).redisUrl, null, 'empty is the embedded store')
  for (const bad of ['http://127.0.0.1:6379', 'redis:', '127.0.0.1:6379', 'redis://host:6379/db']) {
    assert.throws(() => loadConfig([], { ALGOSERVE_REDIS_URL: bad }), /Invalid ALGOSERVE_REDIS_URL/, bad)
  }
  assert.throws(() => loadConfig([], { ALGOSERVE_REDIS_PREFIX: 'a:b' }), /ALGOSERVE_REDIS_PREFIX/)
  assert.throws(() => loadConfig(['--job-lock-ms', '999'], {}), /--job-lock-ms \(ALGOSERVE_JOB_LOCK_MS\)/)
})

test('Redis topologies: every combination checked at start, none ignored, the URL and its password never repeated', () => {
  const dir = mkdtempSync(join(tmpdir(), 'algoserve-ca-'))
  const ca = join(dir, 'ca.pem')
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
  const notPem = join(dir, 'not.pem')
  writeFileSync(notPem, 'hello')
  const url = 'rediss://app:Pa55word@10.0.0.1:6379'
  const cluster = loadConfig([], {
    ALGOSERVE_REDIS_URL: url,
    ALGOSERVE_REDIS_CLUSTER_NODES: '10.0.0.1:6379, 10.0.0.2:6379,redis-3.example:6379',
    ALGOSERVE_REDIS_PREFIX: '{prod}',
    ALGOSERVE_REDIS_TLS_CA_FILE: ca,
  })
  assert.deepEqual(cluster.redisClusterNodes, ['10.0.0.1:6379', '10.0.0.2:6379', 'redis-3.example:6379'])
  assert.equal(cluster.redisTlsCaFile, ca)
  const sentinel = loadConfig([], {
    ALGOSERVE_REDIS_URL: 'redis://:pw@s1:26379/1',
    ALGOSERVE_REDIS_SENTINELS: 's1:26379,s2:26379',
    ALGOSERVE_REDIS_SENTINEL_NAME: 'mymaster',
  })
  assert.deepEqual(sentinel.redisSentinels, ['s1:26379', 's2:26379'])
  assert.equal(sentinel.redisSentinelName, 'mymaster')

  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ ALGOSERVE_REDIS_CLUSTER_NODES: 'a:1' }, /ALGOSERVE_REDIS_CLUSTER_NODES needs ALGOSERVE_REDIS_URL/],
    [{ ALGOSERVE_REDIS_SENTINEL_NAME: 'm' }, /ALGOSERVE_REDIS_SENTINEL_NAME needs ALGOSERVE_REDIS_URL/],
    [{ ALGOSERVE_REDIS_TLS_CA_FILE: ca }, /ALGOSERVE_REDIS_TLS_CA_FILE needs ALGOSERVE_REDIS_URL/],
    [{ ALGOSERVE_REDIS_MIN_REPLICAS: '1' }, /ALGOSERVE_REDIS_MIN_REPLICAS needs ALGOSERVE_REDIS_URL/],
    [
      { ALGOSERVE_WORKER_ALGORITHMS: 'PrimeChecker' },
      /ALGOSERVE_WORKER_ALGORITHMS needs ALGOSERVE_REDIS_URL/,
    ],
    [
      {
        ALGOSERVE_REDIS_URL: url,
        ALGOSERVE_REDIS_CLUSTER_NODES: '10.0.0.1:6379',
        ALGOSERVE_REDIS_PREFIX: '{p}',
        ALGOSERVE_REDIS_MIN_REPLICAS: '1',
      },
      /not a Redis Cluster/,
    ],
    [
      {
        ALGOSERVE_REDIS_URL: url,
        ALGOSERVE_REDIS_CLUSTER_NODES: '10.0.0.1:6379',
        ALGOSERVE_REDIS_SENTINELS: '10.0.0.1:6379',
        ALGOSERVE_REDIS_SENTINEL_NAME: 'm',
      },
      /exclude each other/,
    ],
    [{ ALGOSERVE_REDIS_URL: url, ALGOSERVE_REDIS_SENTINELS: '10.0.0.1:6379' }, /set both or neither/],
    [{ ALGOSERVE_REDIS_URL: url, ALGOSERVE_REDIS_SENTINEL_NAME: 'm' }, /set both or neither/],
    [
      {
        ALGOSERVE_REDIS_URL: url,
        ALGOSERVE_REDIS_CLUSTER_NODES: '10.0.0.2:6379',
        ALGOSERVE_REDIS_PREFIX: '{p}',
      },
      /host:port \(10\.0\.0\.1:6379\) must be one of ALGOSERVE_REDIS_CLUSTER_NODES/,
    ],
    [
      { ALGOSERVE_REDIS_URL: url, ALGOSERVE_REDIS_CLUSTER_NODES: '10.0.0.1:6379' },
      /must be hash-tagged, as in \{algoserve\}/,
    ],
    [
      {
        ALGOSERVE_REDIS_URL: url,
        ALGOSERVE_REDIS_CLUSTER_NODES: '10.0.0.1:6379',
        ALGOSERVE_REDIS_PREFIX: 'a{}b',
      },
      /must be hash-tagged/,
    ],
    [
      {
        ALGOSERVE_REDIS_URL: `${url}/3`,
        ALGOSERVE_REDIS_CLUSTER_NODES: '10.0.0.1:6379',
        ALGOSERVE_REDIS_PREFIX: '{p}',
      },
      /only database 0/,
    ],
    [
      { ALGOSERVE_REDIS_URL: 'redis://:pw@10.0.0.1:6379', ALGOSERVE_REDIS_TLS_CA_FILE: ca },
      /must start with rediss:\/\//,
    ],
    [{ ALGOSERVE_REDIS_URL: url, ALGOSERVE_REDIS_TLS_CA_FILE: notPem }, /holds no PEM certificate/],
    [
      { ALGOSERVE_REDIS_URL: url, ALGOSERVE_REDIS_TLS_CA_FILE: join(dir, 'none') },
      /cannot be read \(ENOENT\)/,
    ],
    [
      { ALGOSERVE_REDIS_URL: url, ALGOSERVE_REDIS_CLUSTER_NODES: '10.0.0.1' },
      /'10\.0\.0\.1' is not host:port/,
    ],
    [
      { ALGOSERVE_REDIS_URL: 'redis://app:Pa55word@host:6379/db' },
      /Invalid ALGOSERVE_REDIS_URL: may end only/,
    ],
  ]
  for (const [env, message] of refused) {
    assert.throws(
      () => loadConfig([], env),
      (error: Error) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, message)
        assert.doesNotMatch(error.message, /Pa55word|pw@/)
        return true
      },
      JSON.stringify(env),
    )
  }
  rmSync(dir, { recursive: true })
})

const HASH = 'a'.repeat(64)

test('API keys: hashes from the setting and a file; anything else is refused without repeating it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'algoserve-keys-'))
  try {
    const file = join(dir, 'keys')
    writeFileSync(file, `# the deploy key\nsha256:${'B'.repeat(64)}\n\n${'c'.repeat(64)}\n`)
    const config = loadConfig(['--api-keys-file', file], {
      ALGOSERVE_API_KEYS: `sha256:${HASH}, ${'d'.repeat(64)}`,
    })
    assert.deepEqual(config.apiKeys, [HASH, 'd'.repeat(64)])
    assert.equal(config.apiKeysFile, file)
    for (const bad of ['my-plain-key-123', `sha256:${'a'.repeat(63)}`]) {
      assert.throws(
        () => loadConfig([], { ALGOSERVE_API_KEYS: bad }),
        (error: Error) => {
          assert.match(error.message, /ALGOSERVE_API_KEYS: entry 1 is not a SHA-256 hash/)
          assert.ok(!error.message.includes(bad), 'the value is not repeated')
          return true
        },
      )
    }
    writeFileSync(file, '# nothing yet\n')
    assert.throws(
      () => loadConfig([], { ALGOSERVE_API_KEYS_FILE: file }),
      /ALGOSERVE_API_KEYS_FILE.*no key hash/,
    )
    assert.throws(
      () => loadConfig([], { ALGOSERVE_API_KEYS_FILE: join(dir, 'absent') }),
      /ALGOSERVE_API_KEYS_FILE.*cannot be read \(ENOENT\)/,
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a malformed webhook secret is refused without printing it', () => {
  const secret = 'whsec_c2VjcmV0LXNob3J0'
  assert.throws(
    () => loadConfig([], { ALGOSERVE_WEBHOOK_SECRET: secret }),
    (error: Error) => {
      assert.match(error.message, /^Invalid ALGOSERVE_WEBHOOK_SECRET: must hold 24 to 64 bytes/)
      assert.ok(!error.message.includes('c2VjcmV0'), error.message)
      return true
    },
  )
})

test('CORS origins, rate limits and the proxy setting', () => {
  const config = loadConfig(['--rate-limit', '5', '--trust-proxy', 'yes'], {
    ALGOSERVE_CORS_ORIGINS: 'https://app.example.com, http://localhost:3000/',
    ALGOSERVE_RATE_LIMIT_WINDOW_MS: '2000',
  })
  assert.deepEqual(config.corsOrigins, ['https://app.example.com', 'http://localhost:3000'])
  assert.equal(config.rateLimit, 5)
  assert.equal(config.rateLimitWindowMs, 2000)
  assert.equal(config.trustProxy, true)
  assert.deepEqual(loadConfig([], { ALGOSERVE_CORS_ORIGINS: '*' }).corsOrigins, ['*'])
  for (const bad of ['app.example.com', 'https://app.example.com/path']) {
    assert.throws(
      () => loadConfig([], { ALGOSERVE_CORS_ORIGINS: bad }),
      /ALGOSERVE_CORS_ORIGINS.*not an origin/,
    )
  }
  assert.throws(
    () => loadConfig([], { ALGOSERVE_RATE_LIMIT_WINDOW_MS: '10' }),
    /ALGOSERVE_RATE_LIMIT_WINDOW_MS/,
  )
})

test("the API document's title and version are one line each, its description any text; empty is none", () => {
  const config = loadConfig(['--api-title', ' Routes of ACME '], {
    ALGOSERVE_API_VERSION: '2026.11',
    ALGOSERVE_API_DESCRIPTION: 'Shortest paths.\n\n* Weights are exact.',
  })
  assert.equal(config.apiTitle, 'Routes of ACME')
  assert.equal(config.apiVersion, '2026.11')
  assert.equal(config.apiDescription, 'Shortest paths.\n\n* Weights are exact.')
  assert.equal(loadConfig([], { ALGOSERVE_API_TITLE: ' ' }).apiTitle, null)
  assert.throws(() => loadConfig([], { ALGOSERVE_API_TITLE: 'a\nb' }), /ALGOSERVE_API_TITLE.*one line/)
  assert.throws(() => loadConfig([], { ALGOSERVE_API_VERSION: 'v'.repeat(65) }), /at most 64 characters/)
  assert.throws(() => loadConfig([], { ALGOSERVE_API_DESCRIPTION: 'd'.repeat(65_537) }), /at most 65536/)
})

test('variables that look like settings but are none are named with the closest setting', () => {
  assert.deepEqual(
    unknownSettings({ ALGOSERVE_PROT: '9000', ALGOSERVE_PORT: '1', PATH: '/bin', ALGOSERVE_API_KEY: 'x' }),
    [
      'ALGOSERVE_API_KEY is not a setting and is ignored; did you mean ALGOSERVE_API_KEYS?',
      'ALGOSERVE_PROT is not a setting and is ignored; did you mean ALGOSERVE_PORT?',
    ],
  )
  assert.deepEqual(unknownSettings({ ALGOSERVE_PORT: '1' }), [])
})

test('more than one HTTP process is taken with either store', () => {
  assert.equal(loadConfig(['--http-processes', '2'], {}).httpProcesses, 2)
  const redis = { ALGOSERVE_REDIS_URL: 'redis://127.0.0.1:6379' }
  assert.equal(loadConfig(['--http-processes', '2'], redis).httpProcesses, 2)
  assert.equal(loadConfig([], {}).httpProcesses, 1)
})

test('ALGOSERVE_DEFAULT_VERSIONS names a default per algorithm, or splits one by weight', () => {
  const read = (raw: string) => loadConfig(['--default-versions', raw], {}).defaultVersions
  assert.deepEqual(
    read('Sum@1.2.0:90, Sum@1.3.0:10,Other@0.3.0'),
    new Map([
      [
        'Sum',
        [
          { version: '1.2.0', weight: 90 },
          { version: '1.3.0', weight: 10 },
        ],
      ],
      ['Other', [{ version: '0.3.0', weight: 1 }]],
    ]),
  )
  assert.deepEqual(read(''), new Map())
  for (const [bad, said] of [
    ['Sum', "'Sum' is not Name@version"],
    ['Sum@^1', "'Sum@^1': ^1 is not an exact semver version"],
    ['Sum@1.2', "'Sum@1.2': 1.2 is not an exact semver version"],
    ['Sum@1.2.0:0', 'the weight must be a whole number from 1 to 999999'],
    ['Sum@1.2.0:half', 'the weight must be a whole number'],
    ['Sum@1.2.0,Sum@1.3.0:10', "Sum's default is split between versions: give each its weight"],
    ['Sum@1.2.0:5,Sum@1.2.0:5', 'Sum@1.2.0 is named twice'],
    ['S.um@1.2.0', "'S.um@1.2.0' is not Name@version"],
  ] as const) {
    assert.throws(
      () => loadConfig([], { ALGOSERVE_DEFAULT_VERSIONS: bad }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.startsWith(`Invalid ALGOSERVE_DEFAULT_VERSIONS=${JSON.stringify(bad)}`) &&
        error.message.includes(said),
      bad,
    )
  }
})

test('ALGOSERVE_DEPRECATED_VERSIONS names versions by name, each with its sunset day or none', () => {
  const read = (raw: string) => loadConfig([], { ALGOSERVE_DEPRECATED_VERSIONS: raw }).deprecatedVersions
  assert.deepEqual(
    read('Sum@1.0.0:2027-06-30,Sum@1.1.0-rc.1'),
    new Map([
      ['Sum@1.0.0', { sunset: '2027-06-30' }],
      ['Sum@1.1.0-rc.1', { sunset: null }],
    ]),
  )
  for (const [bad, said] of [
    ['Sum@1.0.0:2027-02-30', 'the sunset must be a day, YYYY-MM-DD'],
    ['Sum@1.0.0:tomorrow', 'the sunset must be a day'],
    ['Sum@1.x', '1.x is not an exact semver version'],
    ['@1.0.0', "'@1.0.0' is not Name@version"],
    ['Sum@1.0.0,Sum@1.0.0:2027-01-01', 'Sum@1.0.0 is named twice'],
  ] as const) {
    assert.throws(
      () => loadConfig(['--deprecated-versions', bad], {}),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.startsWith('Invalid --deprecated-versions (ALGOSERVE_DEPRECATED_VERSIONS)') &&
        error.message.includes(said),
      bad,
    )
  }
})

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { defaultConfig, flagName, loadConfig, SETTINGS } from '../src/config.js'
import { ConfigError } from '../src/errors.js'

test('the defaults are these values', () => {
  assert.deepEqual(loadConfig([], {}), {
    host: '127.0.0.1',
    port: 8000,
    dataDir: './data',
    maxDigits: 4300,
    maxBodyBytes: 1_048_576,
    invokeFactorBudgetMs: 2000,
    workerThreads: 0,
    shutdownGraceMs: 30_000,
    logLevel: 'info',
    jobFactorBudgetMs: 60_000,
    jobTimeoutMs: 300_000,
    jobConcurrency: 0,
    jobTtlSeconds: 86_400,
    maxPendingJobs: 10_000,
    webhookSecret: null,
    webhookAllowPrivate: false,
    maxJsonDepth: 32,
    maxJsonValues: 10_000,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    maxBufferedBodyBytes: 67_108_864,
    invokeQueueTimeoutMs: 2_000,
    drainDelayMs: 5_000,
  })
  assert.deepEqual(loadConfig([], {}), defaultConfig())
})

test("the README's settings table lists every setting with its flag and default, and nothing else", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const rows = [...readme.matchAll(/^\| `(ALGOSERVE_[A-Z_]+)` \| `(--[a-z-]+)` \| `?([^|`]*?)`? \|/gm)]
  const documented = new Map(rows.map(([, env, flag, value]) => [env, { flag, value }]))
  for (const s of SETTINGS) {
    assert.deepEqual(
      documented.get(s.env),
      { flag: flagName(s.env), value: String(s.default ?? 'none') },
      `README row of ${s.env}`,
    )
  }
  assert.deepEqual([...documented.keys()].sort(), SETTINGS.map((s) => s.env).sort())
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

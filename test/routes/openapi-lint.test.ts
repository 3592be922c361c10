// `redocly lint` (recommended rules) of the live /openapi.json: no error. The warnings accepted are
// listed here with why; any other warning fails.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  moduleSource,
  REFERRING_MODULES,
  splitDefault,
  validMembers,
  writeModules,
} from '../helpers/algorithms.js'
import { startApp } from '../helpers/app.js'

const ROOT = new URL('../../', import.meta.url).pathname
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly')

type Lint = {
  totals: { errors: number; warnings: number }
  problems: { ruleId: string; location: { pointer: string }[] }[]
}

/** Lints the document a service with these settings serves, with the given redocly config. */
async function lint(overrides: Parameters<typeof startApp>[0], config: string): Promise<Lint> {
  const server = await startApp(overrides)
  const dir = mkdtempSync(join(tmpdir(), 'algoserve-lint-'))
  try {
    const document = await (await fetch(`${server.url}/openapi.json`)).text()
    writeFileSync(join(dir, 'openapi.json'), document)
    const run = spawnSync(REDOCLY, ['lint', '--format=json', `--config=${config}`, 'openapi.json'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      timeout: 120_000,
    })
    assert.ok(run.stdout.trim().startsWith('{'), `redocly printed no report: ${run.stderr}`)
    return JSON.parse(run.stdout) as Lint
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await server.close()
  }
}

const warnings = (result: Lint) =>
  result.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`).sort()

// Accepted: liveness, readiness and metrics have no 4xx in the contract. /healthz answers 200 whenever the
// process can answer, /readyz 200 or 503, /metrics 200; documenting the framework's 404/405 on them would
// describe nothing a client can do differently. /job-summary and /algorithms take no input, so no 4xx
// either (without keys; with them, 401).
const DEFAULT_WARNINGS = [
  'operation-4xx-response #/paths/~1algorithms/get/responses',
  'operation-4xx-response #/paths/~1healthz/get/responses',
  'operation-4xx-response #/paths/~1job-summary/get/responses',
  'operation-4xx-response #/paths/~1metrics/get/responses',
  'operation-4xx-response #/paths/~1readyz/get/responses',
]

test('the default document passes the recommended rules; 5 warnings accepted', async () => {
  const result = await lint({}, join(ROOT, 'redocly.yaml'))
  assert.equal(result.totals.errors, 0, JSON.stringify(result.problems, null, 1))
  assert.deepEqual(warnings(result), DEFAULT_WARNINGS)
})

test('with API keys (metrics protected) and rate limits, every recommended rule passes, security-defined included', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'algoserve-lint-config-'))
  const config = join(dir, 'redocly.yaml')
  writeFileSync(config, 'extends:\n  - recommended\n')
  try {
    const hash = createHash('sha256').update('a-key').digest('hex')
    const result = await lint({ apiKeys: [hash], apiKeysForMetrics: true, rateLimit: 100 }, config)
    assert.equal(result.totals.errors, 0, JSON.stringify(result.problems, null, 1))
    assert.deepEqual(warnings(result), [
      'operation-4xx-response #/paths/~1healthz/get/responses',
      'operation-4xx-response #/paths/~1readyz/get/responses',
    ])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('with user algorithms whose types share a name, or that refer to parts of themselves, 0 errors, and only the warnings of the default', async () => {
  // Both call their params type Input, as TypeBox users may: the components are named by algorithm.
  // Tree and Graph both define a Node, and refer to it ($defs, recursion, TypeBox's references by $id).
  const modules = writeModules({
    ...REFERRING_MODULES,
    'adder.mjs': moduleSource(
      validMembers('Adder').replace("params: { type: 'object',", "params: { $id: 'Input', type: 'object',"),
    ),
    'other.mjs': moduleSource(
      validMembers('Other').replace("params: { type: 'object',", "params: { $id: 'Input', type: 'object',"),
    ),
  })
  try {
    const result = await lint({ algorithms: [modules.dir] }, join(ROOT, 'redocly.yaml'))
    assert.equal(result.totals.errors, 0, JSON.stringify(result.problems, null, 1))
    assert.deepEqual(warnings(result), DEFAULT_WARNINGS)
  } finally {
    modules.remove()
  }
})

test("without PrimeChecker, with one algorithm of the deployment's and its own title and version: 0 errors, the default's warnings", async () => {
  const collatz = join(ROOT, 'examples/algorithms/collatz.mjs')
  const result = await lint(
    { primeChecker: false, algorithms: [collatz], apiTitle: 'Collatz service', apiVersion: '2.0.0' },
    join(ROOT, 'redocly.yaml'),
  )
  assert.equal(result.totals.errors, 0, JSON.stringify(result.problems, null, 1))
  assert.deepEqual(warnings(result), DEFAULT_WARNINGS)
})

test("with several versions of one name, a canary split, a deprecated version and a build in a version: 0 errors, the default's warnings", async () => {
  const at = (version: string) => moduleSource(validMembers('Sum', undefined, version))
  const modules = writeModules({
    'sum-1.0.0.mjs': at('1.0.0'),
    'sum-1.1.0.mjs': at('1.1.0'),
    'sum-2.0.0-rc.1.mjs': at('2.0.0-rc.1'),
    'sum-2.0.0-build.mjs': at('2.0.0+build.5'),
  })
  try {
    const result = await lint(
      {
        algorithms: [modules.dir],
        defaultVersions: splitDefault('Sum', ['1.0.0', 9], ['1.1.0', 1]),
        deprecatedVersions: new Map([['Sum@1.0.0', { sunset: '2027-06-30' }]]),
      },
      join(ROOT, 'redocly.yaml'),
    )
    assert.equal(result.totals.errors, 0, JSON.stringify(result.problems, null, 1))
    assert.deepEqual(warnings(result), DEFAULT_WARNINGS)
  } finally {
    modules.remove()
  }
})

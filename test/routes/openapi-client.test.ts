// A typed client generated from the live /openapi.json (openapi-typescript) type-checks, and calls
// every operation through openapi-fetch against the same service.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startApp, type TestApp } from '../helpers/app.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const FIXTURE = join(ROOT, 'test/fixtures/typed-client/client.ts')
// Inside node_modules, so that the generated client resolves openapi-fetch like any file of the repo.
const WORK = join(ROOT, 'node_modules/.cache/algoserve-typed-client')
const run = promisify(execFile)

const tsc = join(ROOT, 'node_modules/.bin/tsc')
const TSC_FLAGS = ['--noEmit', '--strict', '--module', 'NodeNext', '--moduleResolution', 'NodeNext']

/** The folder `dir` with the document the service at `url` serves and the types generated from it. */
async function generate(url: string, dir: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'openapi.json'), await (await fetch(`${url}/openapi.json`)).text())
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n')
  await run(join(ROOT, 'node_modules/.bin/openapi-typescript'), ['openapi.json', '-o', 'schema.ts'], {
    cwd: dir,
  })
}

let server: TestApp
before(async () => {
  server = await startApp()
  await generate(server.url, WORK)
  copyFileSync(FIXTURE, join(WORK, 'client.ts'))
})
after(async () => {
  await server.close()
  rmSync(WORK, { recursive: true, force: true })
})

test('the generated client type-checks under strict settings', async () => {
  const result = await run(tsc, [...TSC_FLAGS, '--target', 'ES2022', '--skipLibCheck', 'client.ts'], {
    cwd: WORK,
  }).catch((error: { stdout: string }) => assert.fail(`tsc found errors:\n${error.stdout}`))
  assert.equal(result.stdout, '')
})

test('the generated client calls every operation of the document', async () => {
  // Typed here by hand: the fixture only compiles beside its generated schema.
  const client = (await import(join(WORK, 'client.ts'))) as {
    callEveryOperation(baseUrl: string): Promise<Record<string, number>>
  }
  const statuses = await client.callEveryOperation(server.url)
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { operationId: string }>>
  }
  const operationIds = Object.values(document.paths).flatMap((item) =>
    Object.values(item).map((operation) => operation.operationId),
  )
  assert.deepEqual(Object.keys(statuses).sort(), operationIds.sort())
  assert.deepEqual(statuses, {
    invoke: 200,
    listAlgorithms: 200,
    getAlgorithm: 200,
    invoke_PrimeChecker: 200,
    getAlgorithmVersion: 200,
    'invoke_PrimeChecker_1.0.0': 200,
    createJob: 202,
    getJob: 200,
    listJobs: 200,
    cancelJob: 409,
    getJobDeliveries: 200,
    streamJobEvents: 200,
    getJobSummary: 200,
    healthz: 200,
    readyz: 200,
    metrics: 200,
  })
})

// SlowCount's `step_ms` has a default (100) and `to` none: a client may leave out the first, not the second.
const DEFAULTS_CHECK = `import type { components } from './schema.js'
type Params = components['schemas']['SlowCount.Params']
type Job = components['schemas']['SlowCount.JobRequest']
export const leftOut: Params = { to: 5 }
export const given: Params = { to: 5, step_ms: 10 }
export const job: Job = { algorithm: 'SlowCount', params: { to: 5 } }
// @ts-expect-error: \`to\` has no default, so it is required
export const missing: Params = { step_ms: 10 }
`

test('params that have a default are optional in the generated types, the others required', async () => {
  // SlowCount alone, without PrimeChecker: its job body is a shape of its own there too.
  const algorithms = await startApp({
    primeChecker: false,
    algorithms: [join(ROOT, 'examples/algorithms/slow-count.mjs')],
  })
  const dir = `${WORK}-defaults`
  try {
    await generate(algorithms.url, dir)
    writeFileSync(join(dir, 'check.ts'), DEFAULTS_CHECK)
    await run(tsc, [...TSC_FLAGS, '--target', 'ES2022', '--skipLibCheck', 'check.ts'], { cwd: dir }).catch(
      (error: { stdout: string }) => assert.fail(`tsc found errors:\n${error.stdout}`),
    )
  } finally {
    await algorithms.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

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

let server: TestApp
before(async () => {
  server = await startApp()
  rmSync(WORK, { recursive: true, force: true })
  mkdirSync(WORK, { recursive: true })
  writeFileSync(join(WORK, 'openapi.json'), await (await fetch(`${server.url}/openapi.json`)).text())
  writeFileSync(join(WORK, 'package.json'), '{"type": "module"}\n')
  copyFileSync(FIXTURE, join(WORK, 'client.ts'))
  await run(join(ROOT, 'node_modules/.bin/openapi-typescript'), ['openapi.json', '-o', 'schema.ts'], {
    cwd: WORK,
  })
})
after(async () => {
  await server.close()
  rmSync(WORK, { recursive: true, force: true })
})

test('the generated client type-checks under strict settings', async () => {
  const tsc = join(ROOT, 'node_modules/.bin/tsc')
  const flags = ['--noEmit', '--strict', '--module', 'NodeNext', '--moduleResolution', 'NodeNext']
  const result = await run(tsc, [...flags, '--target', 'ES2022', '--skipLibCheck', 'client.ts'], {
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

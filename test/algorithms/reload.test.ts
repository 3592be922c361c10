// Reloading the algorithms in a running service, on each backend: a version added is callable and listed,
// and jobs run on it; a version removed takes no new calls, while a call running on it ends well; a
// changed file at a loaded version, or a list that does not load, is refused with the running set as it
// was; the OpenAPI document and the readiness checks follow the set, an operation per version added.
import assert from 'node:assert/strict'
import { cpSync, rmSync, writeFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { resolveVersion } from '../../src/algorithms/registry.js'
import { AlgorithmNotFoundError, ReloadFailedError, VersionChangedError } from '../../src/errors.js'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'

/** A valid module `name` at `version` whose result tells the version that ran: `sum` is its minor. */
const at = (name: string, version: string, run?: string) =>
  moduleSource(
    validMembers(name, run ?? `() => ({ sum: ${Number(version.split('.')[1])} })`).replace(
      "'1.0.0'",
      `'${version}'`,
    ),
  )

const ECHO = fileURLToPath(new URL('../../examples/algorithms/echo-bash', import.meta.url))

/** Slow 1.0.0 holds its thread for a while: long enough for a reload to remove it meanwhile. */
const SLOW_RUN = '() => { const end = Date.now() + 1500; while (Date.now() < end) {} return { sum: 7 } }'

async function call(url: string, name: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/algorithms/${name}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ a: 1, b: 2 }),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const versionOf = (body: Record<string, unknown>) => (body.metadata as { version?: string }).version

async function listed(url: string): Promise<string[]> {
  const { algorithms } = (await (await fetch(`${url}/algorithms`)).json()) as {
    algorithms: { name: string; version: string }[]
  }
  return algorithms.map(({ name, version }) => `${name}@${version}`)
}

async function readinessChecks(url: string): Promise<Record<string, boolean>> {
  return ((await (await fetch(`${url}/readyz`)).json()) as { checks: Record<string, boolean> }).checks
}

interface Document {
  paths: Record<string, { post?: { requestBody?: unknown } }>
  components: { schemas: Record<string, unknown> }
}

/** The document as `path` (the document, or Swagger UI's copy of it) serves it. */
async function documentAt(url: string, path: string): Promise<Document> {
  return (await (await fetch(`${url}${path}`)).json()) as Document
}

forEachBackend((backend) => {
  const folder = writeModules({
    'sum-1.0.0.mjs': at('Sum', '1.0.0'),
    'slow.mjs': at('Slow', '1.0.0', SLOW_RUN),
  })
  let server: TestApp
  before(async () => {
    server = await backend.start({ algorithms: [folder.dir], primeChecker: false })
  })
  after(async () => {
    await server.close()
    folder.remove()
  })

  test('a version added is callable, listed, documented, and its jobs run on it', async () => {
    assert.equal(versionOf((await call(server.url, 'Sum')).body), '1.0.0')
    writeFileSync(folder.file('sum-1.1.0.mjs'), at('Sum', '1.1.0'))
    writeFileSync(folder.file('product.mjs'), at('Product', '2.3.0'))
    const outcome = await server.service.reload('test')
    assert.deepEqual(outcome.added.sort(), ['Product@2.3.0', 'Sum@1.1.0'])
    assert.deepEqual(outcome.removed, [])
    assert.deepEqual(await listed(server.url), ['Product@2.3.0', 'Slow@1.0.0', 'Sum@1.1.0'])
    // The highest is the default now, run by threads that started before it existed.
    for (let i = 0; i < 4; i++) {
      const { status, body } = await call(server.url, 'Sum')
      assert.equal(status, 200)
      assert.equal(versionOf(body), '1.1.0')
      assert.deepEqual(body.result, { sum: 1 })
    }
    // A name that had no route at the start.
    const called = await call(server.url, 'Product')
    assert.equal(called.status, 200, JSON.stringify(called.body))
    assert.deepEqual(called.body.result, { sum: 3 })
    const created = await createJob(server.url, { algorithm: 'Sum', params: { a: 1, b: 2 } })
    assert.equal(created.status, 202)
    const job = await waitForJob(server.url, created.json.job_id as string)
    assert.equal(job.status, 'completed', JSON.stringify(job))
    assert.equal(job.metadata?.version, '1.1.0')
    // A job of a name the reload added is taken; on Redis its consumers are the backend's algorithmsChanged.
    const product = await createJob(server.url, { algorithm: 'Product', params: { a: 2, b: 2 } })
    assert.equal(product.status, 202, JSON.stringify(product.json))
    if (backend.name === 'embedded') {
      const ran = await waitForJob(server.url, product.json.job_id as string)
      assert.deepEqual(ran.result, { sum: 3 })
    }
    const detail = (await (await fetch(`${server.url}/algorithms/Sum`)).json()) as { version: string }
    assert.equal(detail.version, '1.1.0')
    // Each version and name the reload added has its own operation, from its own schema, in the document
    // and in Swagger UI's copy of it.
    for (const path of ['/openapi.json', '/docs/json']) {
      const { paths, components } = await documentAt(server.url, path)
      for (const added of ['/algorithms/Sum/versions/1.1.0/invoke', '/algorithms/Product/invoke'])
        assert.ok(added in paths, `${path} documents ${added}`)
      const operation = paths['/algorithms/Product/versions/2.3.0/invoke']?.post
      assert.ok(operation !== undefined, `${path} documents Product 2.3.0`)
      assert.match(
        JSON.stringify(operation.requestBody),
        /"#\/components\/schemas\/Product\.2\.3\.0\.Params"/,
      )
      assert.match(JSON.stringify(components.schemas['Product.2.3.0.Params']), /"a":\{"type":"integer"/)
    }
  })

  test('a version removed takes no new calls, while a call running on it ends well', async () => {
    const running = call(server.url, 'Slow')
    // The call has reached its thread before the reload.
    await new Promise((resolve) => setTimeout(resolve, 300))
    rmSync(folder.file('slow.mjs'))
    rmSync(folder.file('sum-1.1.0.mjs'))
    const outcome = await server.service.reload('test')
    assert.deepEqual(outcome.removed.sort(), ['Slow@1.0.0', 'Sum@1.1.0'])
    const finished = await running
    assert.equal(finished.status, 200, JSON.stringify(finished.body))
    assert.deepEqual(finished.body.result, { sum: 7 })
    const gone = await call(server.url, 'Slow')
    assert.equal(gone.status, 404)
    assert.equal((gone.body.detail as { error: string }).error, 'ALGORITHM_NOT_FOUND')
    assert.equal(versionOf((await call(server.url, 'Sum')).body), '1.0.0')
    const { paths } = await documentAt(server.url, '/openapi.json')
    for (const removed of ['/algorithms/Sum/versions/1.1.0/invoke', '/algorithms/Slow/invoke'])
      assert.ok(!(removed in paths), `the document no longer has ${removed}`)
    assert.ok('/algorithms/Sum/versions/1.0.0/invoke' in paths)
    assert.throws(
      () => resolveVersion(server.service.algorithms, 'Sum', '1.1.0'),
      (error: unknown) =>
        error instanceof AlgorithmNotFoundError &&
        JSON.stringify(error.details?.available_versions) === '["1.0.0"]',
    )
  })

  test('a changed file at a loaded version refuses the reload, naming the file; the set stays', async () => {
    const generation = server.service.algorithms.generation
    writeFileSync(folder.file('sum-1.0.0.mjs'), at('Sum', '1.0.0', '() => ({ sum: 99 })'))
    writeFileSync(folder.file('sum-1.4.0.mjs'), at('Sum', '1.4.0'))
    await assert.rejects(
      server.service.reload('test'),
      (error: unknown) =>
        error instanceof VersionChangedError &&
        error.statusCode === 409 &&
        error.message.includes(folder.file('sum-1.0.0.mjs')) &&
        error.message.includes('1.0.0'),
    )
    assert.equal(server.service.algorithms.generation, generation)
    const { body } = await call(server.url, 'Sum')
    assert.equal(versionOf(body), '1.0.0')
    assert.deepEqual(body.result, { sum: 0 })
    // Put back as it was, it loads again, with the new version.
    writeFileSync(folder.file('sum-1.0.0.mjs'), at('Sum', '1.0.0'))
    assert.deepEqual((await server.service.reload('test')).added, ['Sum@1.4.0'])
  })

  test('a list that does not load is refused with its reason; the set stays', async () => {
    const generation = server.service.algorithms.generation
    writeFileSync(folder.file('broken.mjs'), 'export default {')
    try {
      await assert.rejects(
        server.service.reload('test'),
        (error: unknown) =>
          error instanceof ReloadFailedError &&
          error.statusCode === 422 &&
          error.message.includes(folder.file('broken.mjs')),
      )
      assert.equal(server.service.algorithms.generation, generation)
      assert.equal(versionOf((await call(server.url, 'Sum')).body), '1.4.0')
    } finally {
      rmSync(folder.file('broken.mjs'))
    }
  })
  test('request bounds: a name added is held to its own; above what the routes read, the reload is refused', async () => {
    writeFileSync(folder.file('tight.mjs'), moduleSource(`${validMembers('Tight')}\n  maxBodyBytes: 100,`))
    assert.deepEqual((await server.service.reload('test')).added, ['Tight@1.0.0'])
    const post = (body: string) =>
      fetch(`${server.url}/algorithms/Tight/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
    assert.equal((await post('{"a":1,"b":2}')).status, 200)
    const tooLarge = await post(JSON.stringify({ a: 1, b: 2, pad: 'x'.repeat(200) }))
    assert.equal(tooLarge.status, 413)
    assert.match(JSON.stringify(await tooLarge.json()), /100/)
    // 4 MiB: within the ceiling, above the 1 MiB every route of this service reads bodies under.
    const generation = server.service.algorithms.generation
    writeFileSync(folder.file('big.mjs'), moduleSource(`${validMembers('Big')}\n  maxBodyBytes: 4194304,`))
    await assert.rejects(
      server.service.reload('test'),
      (error: unknown) =>
        error instanceof ReloadFailedError &&
        error.message.includes(folder.file('big.mjs')) &&
        /maxBodyBytes.*4194304.*restart/.test(error.message),
    )
    assert.equal(server.service.algorithms.generation, generation)
    rmSync(folder.file('big.mjs'))
    // A version of a name loaded at the start, with smaller bounds, is held to them on the name's route.
    writeFileSync(
      folder.file('sum-1.5.0.mjs'),
      moduleSource(`${validMembers('Sum', undefined, '1.5.0')}\n  maxBodyBytes: 100,`),
    )
    assert.deepEqual((await server.service.reload('test')).added, ['Sum@1.5.0'])
    const sumTooLarge = await fetch(`${server.url}/algorithms/Sum/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 1, b: 2, pad: 'x'.repeat(200) }),
    })
    assert.equal(sumTooLarge.status, 413)
    rmSync(folder.file('sum-1.5.0.mjs'))
    rmSync(folder.file('tight.mjs'))
    assert.deepEqual((await server.service.reload('test')).removed.sort(), ['Sum@1.5.0', 'Tight@1.0.0'])
  })

  test('a process algorithm added starts its processes and is callable; removed, it is gone', async () => {
    cpSync(ECHO, folder.file('echo'), { recursive: true })
    assert.deepEqual((await server.service.reload('test')).added, ['Echo@1.0.0'])
    const response = await fetch(`${server.url}/algorithms/Echo/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hi' }),
    })
    assert.equal(response.status, 200)
    assert.deepEqual(((await response.json()) as { result: unknown }).result, { text: 'hi' })
    // Readiness checks its processes as it checks those of the algorithms loaded at the start.
    assert.equal((await readinessChecks(server.url))['process:Echo'], true)
    rmSync(folder.file('echo'), { recursive: true })
    assert.deepEqual((await server.service.reload('test')).removed, ['Echo@1.0.0'])
    assert.ok(!('process:Echo' in (await readinessChecks(server.url))), 'no check of a removed algorithm')
    const gone = await fetch(`${server.url}/algorithms/Echo/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hi' }),
    })
    assert.equal(gone.status, 404)
  })
})

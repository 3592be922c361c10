// Versions over real HTTP, on every backend: a job is pinned to the version its `version` picks (exact,
// a semver range, or the default) and runs on exactly that one, which Algorithm-Version names from the 202
// on; its params are checked against that version's schema; an unknown version is 404 with the versions
// loaded; POST /algorithms/{name}/versions/{version}/invoke runs the version named. On the embedded store,
// a job whose version is not loaded waits, saying so, and runs once it is loaded again.
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { loadRegistry } from '../../src/algorithms/registry.js'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import { postRaw, type TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { until } from '../helpers/time.js'

/** Sum at `version`: its result says which version ran it. */
const sumAt = (version: string) =>
  moduleSource(validMembers('Sum', `(p) => ({ sum: p.a + p.b, by: '${version}' })`, version))

/** Tiny at `version`, with `bounds` (contract members): it counts the members of its params. */
const tinyAt = (version: string, bounds: string) =>
  moduleSource(`
  name: 'Tiny', version: '${version}', description: 'Counts members.', ${bounds}
  params: { type: 'object' }, result: { type: 'object' },
  run: (p) => ({ members: Object.keys(p).length, by: '${version}' }),`)

const modules = writeModules({
  'sum-1.0.0.mjs': sumAt('1.0.0'),
  'sum-1.1.0.mjs': sumAt('1.1.0'),
  // 2.0.0 takes a third member, which 1.x refuses (additionalProperties: false).
  'sum-2.0.0.mjs': moduleSource(
    validMembers('Sum', "(p) => ({ sum: p.a + p.b + (p.c ?? 0), by: '2.0.0' })")
      .replace("'1.0.0'", "'2.0.0'")
      .replace(
        "b: { type: 'integer', minimum: 0 }",
        "b: { type: 'integer', minimum: 0 }, c: { type: 'integer' }",
      ),
  ),
  // 1.0.0 holds bodies to bounds below the settings'; 2.0.0 to the settings'.
  'tiny-1.0.0.mjs': tinyAt('1.0.0', 'maxBodyBytes: 600, maxJsonValues: 50,'),
  'tiny-2.0.0.mjs': tinyAt('2.0.0', ''),
})
after(() => modules.remove())

/** The registry of every module file but `left` (a reload that leaves a version out). */
const registryWithout = (left?: string) =>
  loadRegistry(
    readdirSync(modules.dir)
      .filter((file) => file !== left)
      .map(modules.file),
  )

const LOADED = ['2.0.0', '1.1.0', '1.0.0']

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({ algorithms: [modules.dir] })
  })
  after(() => server.close())

  const get = (id: string) => fetch(`${server.url}/jobs/${id}`)

  for (const [asked, pinned] of [
    ['1.0.0', '1.0.0'],
    ['^1', '1.1.0'],
    ['1.0.x', '1.0.0'],
    [undefined, '2.0.0'],
  ] as const) {
    test(`a job asking for version ${asked ?? '(none)'} is pinned to ${pinned} from its 202 on, and runs on it`, async () => {
      const body = {
        algorithm: 'Sum',
        params: { a: 1, b: 2 },
        ...(asked === undefined ? {} : { version: asked }),
      }
      const created = await createJob(server.url, body)
      assert.equal(created.status, 202)
      assert.equal(created.headers.get('algorithm-version'), pinned)
      assert.deepEqual(Object.keys(created.json).sort(), ['created_at', 'job_id', 'message', 'status'])
      const id = created.json.job_id as string
      const done = await waitForJob(server.url, id)
      assert.equal(done.status, 'completed')
      assert.deepEqual(done.result, { sum: 3, by: pinned })
      assert.equal(done.metadata?.version, created.headers.get('algorithm-version'))
      const read = await get(id)
      assert.equal(read.headers.get('algorithm-version'), pinned)
      assert.equal('version' in ((await read.json()) as object), false, 'the body keeps its shape')
    })
  }

  test("a job's params are checked against its version's schema", async () => {
    const params = { a: 1, b: 2, c: 3 }
    const old = await createJob(server.url, { algorithm: 'Sum', version: '1.0.0', params })
    assert.equal(old.status, 422)
    const detail = (old.json as { detail: { type: string; loc: string[] }[] }).detail
    assert.deepEqual(detail[0]?.loc, ['body', 'params', 'c'])
    const current = await createJob(server.url, { algorithm: 'Sum', version: '2', params })
    assert.equal(current.status, 202)
    assert.equal(current.headers.get('algorithm-version'), '2.0.0')
    const done = await waitForJob(server.url, current.json.job_id as string)
    assert.deepEqual(done.result, { sum: 6, by: '2.0.0' })
  })

  test('a version no loaded one matches is 404 ALGORITHM_NOT_FOUND listing the versions', async () => {
    for (const version of ['3.0.0', '^3', 'not a range']) {
      const response = await createJob(server.url, { algorithm: 'Sum', version, params: { a: 1, b: 2 } })
      assert.equal(response.status, 404, version)
      const { detail } = response.json as { detail: { error: string; details: Record<string, unknown> } }
      assert.equal(detail.error, 'ALGORITHM_NOT_FOUND')
      assert.deepEqual(detail.details.available_versions, LOADED)
      assert.ok((detail.details.available_algorithms as string[]).includes('Sum'))
    }
    const wrongType = await createJob(server.url, { algorithm: 'Sum', version: 2, params: { a: 1, b: 2 } })
    assert.equal(wrongType.status, 422)
  })

  test('an Idempotency-Key replay answers the version the first request pinned', async () => {
    const send = () =>
      fetch(`${server.url}/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `pin-${backend.name}` },
        body: JSON.stringify({ algorithm: 'Sum', version: '^1', params: { a: 2, b: 2 } }),
      })
    const first = await send()
    assert.equal(first.headers.get('algorithm-version'), '1.1.0')
    // Without 1.1.0, '^1' means 1.0.0 now: the replay still answers the job the first request made.
    const { algorithms } = server.service
    const kept = await registryWithout()
    algorithms.replaceWith(await registryWithout('sum-1.1.0.mjs'))
    const again = await send().finally(() => algorithms.replaceWith(kept))
    assert.equal(again.status, 202)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.equal(again.headers.get('algorithm-version'), first.headers.get('algorithm-version'))
    assert.equal(
      ((await again.json()) as { job_id: string }).job_id,
      ((await first.json()) as { job_id: string }).job_id,
    )
  })

  test('POST /algorithms/{name}/versions/{version}/invoke runs the version named; /invoke the default', async () => {
    const call = async (path: string, body: unknown = { a: 20, b: 22 }) => {
      const response = await postRaw(`${server.url}/algorithms/Sum${path}`, JSON.stringify(body))
      return { ...response, version: response.headers.get('algorithm-version') }
    }
    for (const [path, version] of [
      ['/versions/1.0.0/invoke', '1.0.0'],
      [`/versions/${encodeURIComponent('^1')}/invoke`, '1.1.0'],
      [`/versions/${encodeURIComponent('>=1.0.0 <1.1.0')}/invoke`, '1.0.0'],
      ['/versions/2.x/invoke', '2.0.0'],
      ['/invoke', '2.0.0'],
    ] as const) {
      const answer = await call(path)
      assert.equal(answer.status, 200, `${path}: ${answer.text}`)
      assert.equal(answer.version, version, path)
      const { result, metadata } = answer.json as { result: unknown; metadata: { version: string } }
      assert.deepEqual(result, { sum: 42, by: version })
      assert.equal(metadata.version, version)
    }
    const refused = await call('/versions/1.1.0/invoke', { a: 1, b: 2, c: 3 })
    assert.equal(refused.status, 422)
    assert.equal(refused.version, '1.1.0')
    const missing = await call('/versions/9.9.9/invoke')
    assert.equal(missing.status, 404)
    const { error, details } = missing.json as { error: string; details: Record<string, unknown> }
    assert.equal(error, 'ALGORITHM_NOT_FOUND')
    assert.deepEqual(details.available_versions, LOADED)
    const unknown = await postRaw(`${server.url}/algorithms/Nope/versions/1.0.0/invoke`, '{}')
    assert.equal(unknown.status, 404)
    assert.ok(
      (unknown.json as { details: { available_algorithms: string[] } }).details.available_algorithms.includes(
        'Sum',
      ),
    )
  })

  test('a call or job is held to the request bounds of the version it picks', async () => {
    // 100 members, about 1 KB: past 1.0.0's maxBodyBytes (600) and maxJsonValues (50).
    const params = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`m${i}`, i]))
    const body = JSON.stringify(params)
    const at = (path: string) => postRaw(`${server.url}/algorithms/Tiny${path}`, body)
    assert.equal((await at('/versions/1.0.0/invoke')).status, 413)
    const ok = await at('/versions/2.0.0/invoke')
    assert.equal(ok.status, 200)
    assert.deepEqual((ok.json as { result: unknown }).result, { members: 100, by: '2.0.0' })
    assert.equal((await at('/invoke')).status, 200, 'the default, 2.0.0')
    const fewer = JSON.stringify(Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`m${i}`, 1])))
    const tooMany = await postRaw(`${server.url}/algorithms/Tiny/versions/1.0.0/invoke`, fewer)
    assert.equal(tooMany.status, 422, 'more JSON values than 1.0.0 takes')
    const job = (version: string) => createJob(server.url, { algorithm: 'Tiny', version, params })
    assert.equal((await job('1.0.0')).status, 413)
    assert.equal((await job('2.0.0')).status, 202)
  })

  test('POST /invoke names the version that served it', async () => {
    const response = await postRaw(`${server.url}/invoke`, '{"number": 97}')
    assert.equal(response.status, 200)
    assert.equal(
      response.headers.get('algorithm-version'),
      (response.json as { metadata: { version: string } }).metadata.version,
    )
  })

  test('a job whose version is not loaded waits, saying so, and runs once it is loaded again', {
    skip: backend.name === 'redis' ? "the Redis backend's routing by version is its own" : false,
  }, async () => {
    const { algorithms, backend: jobs } = server.service
    const all = await registryWithout()
    const without = await registryWithout('sum-1.1.0.mjs')
    algorithms.replaceWith(without)
    try {
      const refused = await createJob(server.url, {
        algorithm: 'Sum',
        version: '1.1.0',
        params: { a: 1, b: 1 },
      })
      assert.equal(refused.status, 404, 'no new job of a version no longer loaded')
      // One created before the version went (as through another process): it waits, and says why.
      const id = 'feed00000001'
      await jobs.submit({
        id,
        algorithm: 'Sum',
        version: '1.1.0',
        params: '{"a":1,"b":1}',
        webhook: null,
        cheap: false,
        createdAt: Date.now(),
      })
      await until(
        async () => {
          const body = (await (await get(id)).json()) as { message?: string }
          return body.message?.includes('version 1.1.0') === true
        },
        5000,
        'the job says it waits for its version',
      )
      // Past the runner's poll (1 s): still waiting.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const waiting = await get(id)
      assert.equal(waiting.headers.get('algorithm-version'), '1.1.0')
      const body = (await waiting.json()) as { status: string; message: string }
      assert.equal(body.status, 'pending')
      assert.match(body.message, /no live worker takes jobs of version 1\.1\.0 of the algorithm 'Sum'/)
      algorithms.replaceWith(all)
      const done = await waitForJob(server.url, id)
      assert.deepEqual(done.result, { sum: 2, by: '1.1.0' })
      assert.equal(done.metadata?.version, '1.1.0')
    } finally {
      algorithms.replaceWith(all)
    }
  })
})

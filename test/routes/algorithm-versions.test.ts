// Versions side by side over real HTTP: GET /algorithms and /algorithms/{name} list them (default,
// canary weight, deprecated, sunset), GET /algorithms/{name}/versions/{version} shows one, the versioned
// invoke path runs one exactly or by range, the default route draws between the canary's versions, and
// every answer names its version in Algorithm-Version and, for a deprecated one, Deprecation and Sunset.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { minorAt, splitDefault, writeModules } from '../helpers/algorithms.js'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'

const at = minorAt

const modules = writeModules({
  'sum-1.0.0.mjs': at('Sum', '1.0.0'),
  'sum-1.1.0.mjs': at('Sum', '1.1.0'),
  // Its own params: a member c, which the older versions do not take.
  'sum-2.0.0.mjs': at('Sum', '2.0.0').replace(
    "b: { type: 'integer', minimum: 0 } }",
    "b: { type: 'integer', minimum: 0 }, c: { type: 'integer' } }",
  ),
})
after(() => modules.remove())

const SUNSET = 'Wed, 30 Jun 2027 00:00:00 GMT'

describe('versions of one algorithm', () => {
  let server: TestApp
  let started: number
  before(async () => {
    started = Math.floor(Date.now() / 1000)
    server = await startApp({
      algorithms: [modules.dir],
      defaultVersions: splitDefault('Sum', ['1.0.0', 1], ['1.1.0', 1]),
      deprecatedVersions: new Map([
        ['Sum@1.0.0', { sunset: '2027-06-30' }],
        ['PrimeChecker@1.0.0', { sunset: null }],
      ]),
    })
  })
  after(() => server.close())

  const call = (path: string, body: unknown = { a: 1, b: 2 }) =>
    postRaw(`${server.url}${path}`, JSON.stringify(body))

  test('GET /algorithms lists each version: default with its weight, deprecated with its sunset, workers', async () => {
    const { algorithms } = (await (await fetch(`${server.url}/algorithms`)).json()) as {
      algorithms: Record<string, unknown>[]
    }
    const sum = algorithms.find((one) => one.name === 'Sum')
    // The top-level members are the stable default's, as before versions were listed.
    assert.equal(sum?.version, '1.0.0')
    assert.deepEqual(sum?.versions, [
      { version: '2.0.0', default: false, weight: null, deprecated: false, sunset: null, workers: 1 },
      { version: '1.1.0', default: true, weight: 1, deprecated: false, sunset: null, workers: 1 },
      { version: '1.0.0', default: true, weight: 1, deprecated: true, sunset: '2027-06-30', workers: 1 },
    ])
    const detail = (await (await fetch(`${server.url}/algorithms/Sum`)).json()) as Record<string, unknown>
    assert.deepEqual(detail.versions, sum?.versions)
  })

  test('GET /algorithms/{name}/versions/{version} shows that version, exact or by range; none matching is 404', async () => {
    const exact = await fetch(`${server.url}/algorithms/Sum/versions/2.0.0`)
    assert.equal(exact.status, 200)
    const body = (await exact.json()) as Record<string, unknown>
    assert.equal(body.version, '2.0.0')
    assert.equal(body.default, false)
    assert.equal(body.workers, 1)
    assert.deepEqual(body.examples, [{ params: { a: 1, b: 2 } }])
    const range = (await (
      await fetch(`${server.url}/algorithms/Sum/versions/${encodeURIComponent('^1')}`)
    ).json()) as Record<string, unknown>
    assert.equal(range.version, '1.1.0')
    const none = await fetch(`${server.url}/algorithms/Sum/versions/9.x`)
    assert.equal(none.status, 404)
    const { detail } = (await none.json()) as { detail: { error: string; details: Record<string, unknown> } }
    assert.equal(detail.error, 'ALGORITHM_NOT_FOUND')
    assert.deepEqual(detail.details.available_versions, ['2.0.0', '1.1.0', '1.0.0'])
  })

  test('the versioned invoke path runs that version, exact or the highest match of a range', async () => {
    for (const [wanted, version, sum] of [
      ['2.0.0', '2.0.0', 0],
      ['1.1.0', '1.1.0', 1],
      [encodeURIComponent('^1'), '1.1.0', 1],
      ['1.0.x', '1.0.0', 0],
    ] as const) {
      const answer = await call(`/algorithms/Sum/versions/${wanted}/invoke`)
      assert.equal(answer.status, 200, answer.text)
      const body = answer.json as { result: { sum: number }; metadata: { version: string } }
      assert.equal(body.metadata.version, version, wanted)
      assert.equal(body.result.sum, sum)
      assert.equal(answer.headers.get('algorithm-version'), version)
    }
    const none = await call('/algorithms/Sum/versions/3.0.0/invoke')
    assert.equal(none.status, 404)
    const body = none.json as { error: string; details: Record<string, unknown> }
    assert.equal(body.error, 'ALGORITHM_NOT_FOUND')
    assert.deepEqual(body.details.available_versions, ['2.0.0', '1.1.0', '1.0.0'])
  })

  test('a deprecated version answers with Deprecation and Sunset; another with neither', async () => {
    const old = await call('/algorithms/Sum/versions/1.0.0/invoke')
    assert.equal(old.status, 200)
    const since = Number(old.headers.get('deprecation')?.replace(/^@/, ''))
    assert.ok(Number.isInteger(since) && since >= started - 1 && since <= Date.now() / 1000, `${since}`)
    assert.equal(old.headers.get('sunset'), SUNSET)
    const current = await call('/algorithms/Sum/versions/2.0.0/invoke')
    assert.equal(current.headers.get('deprecation'), null)
    assert.equal(current.headers.get('sunset'), null)
    // POST /invoke's algorithm too, deprecated here without a sunset.
    const invoke = await call('/invoke', { number: 97 })
    assert.equal(invoke.status, 200)
    assert.equal(invoke.headers.get('algorithm-version'), '1.0.0')
    assert.equal(invoke.headers.get('deprecation'), `@${since}`)
    assert.equal(invoke.headers.get('sunset'), null)
  })

  test('the default route draws each call between the canary split, and reports the version that served it', async () => {
    const runs = async (version: string) => {
      const text = await (await fetch(`${server.url}/metrics`)).text()
      const line = text
        .split('\n')
        .find((one) =>
          one.startsWith(
            `algorithm_version_executions_total{algorithm="Sum",version="${version}",status="success"} `,
          ),
        )
      return Number(line?.split(' ')[1] ?? 0)
    }
    const before = { '1.0.0': await runs('1.0.0'), '1.1.0': await runs('1.1.0') }
    const counts = new Map<string, number>()
    for (let i = 0; i < 400; i++) {
      const answer = await call('/algorithms/Sum/invoke')
      assert.equal(answer.status, 200)
      const { metadata, result } = answer.json as { metadata: { version: string }; result: { sum: number } }
      assert.equal(answer.headers.get('algorithm-version'), metadata.version)
      assert.equal(result.sum, Number(metadata.version.split('.')[1]))
      assert.equal(answer.headers.get('sunset'), metadata.version === '1.0.0' ? SUNSET : null)
      counts.set(metadata.version, (counts.get(metadata.version) ?? 0) + 1)
    }
    assert.deepEqual([...counts.keys()].sort(), ['1.0.0', '1.1.0'])
    // 50/50 over 400 draws: below 140 or above 260 has a chance of about 1e-9.
    for (const [version, count] of counts) assert.ok(count > 140 && count < 260, `${version}: ${count}`)
    // The metric by version counts the same runs.
    for (const version of ['1.0.0', '1.1.0'] as const)
      assert.equal((await runs(version)) - before[version], counts.get(version), version)
  })

  test("the document has each version's invoke operation with its own schemas; a deprecated one is marked", async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, { post: Record<string, unknown> }>
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> }
    }
    const { schemas } = document.components
    for (const version of ['1.0.0', '1.1.0', '2.0.0']) {
      const operation = document.paths[`/algorithms/Sum/versions/${version}/invoke`]?.post
      assert.equal(operation?.operationId, `invoke_Sum_${version}`)
      assert.equal(operation?.deprecated, version === '1.0.0' ? true : undefined, version)
      const body = operation?.requestBody as { content: Record<string, { schema: unknown }> }
      assert.deepEqual(body.content['application/json']?.schema, {
        $ref: `#/components/schemas/Sum.${version}.Params`,
      })
      assert.ok(schemas[`Sum.${version}.Result`], version)
    }
    assert.deepEqual(Object.keys(schemas['Sum.2.0.0.Params']?.properties ?? {}), ['a', 'b', 'c'])
    assert.deepEqual(Object.keys(schemas['Sum.1.1.0.Params']?.properties ?? {}), ['a', 'b'])
    // The name's own route: its default, drawn between the split, as before.
    const byName = document.paths['/algorithms/Sum/invoke']?.post
    assert.equal(byName?.operationId, 'invoke_Sum')
    assert.match(String(byName?.description), /drawn per call: 1\.0\.0 50%, 1\.1\.0 50%/)
  })
})

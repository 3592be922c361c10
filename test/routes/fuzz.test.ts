// Property-based fuzzing of the three endpoints: whatever the body, content type or path, no 5xx,
// every answer in its contract shape, and no stack trace, path or internal message; on every job
// backend. Seeded and bounded: a failure prints its seed and the shrunk counterexample.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'

const SEED = Number(process.env.FUZZ_SEED ?? 20261123)
const RUNS = Number(process.env.FUZZ_RUNS ?? 250)

const LEAK = /\bat [\w.<>]+ \(|node_modules|\/src\/|\.ts:\d|FST_ERR|RangeError|TypeError|SyntaxError|stack/

const integerText = fc.oneof(
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.integer({ min: 1, max: 5000 }).map((n) => '9'.repeat(n)),
  fc.constantFrom(
    '7.0',
    '1e3',
    '1.5',
    '-0',
    '1e999999',
    '2e-5',
    '18446744073709551557',
    '-18446744073709551557',
  ),
)
const jsonValue = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 3, arbitrary: integerText },
  { weight: 1, arbitrary: integerText.map((t) => JSON.stringify(t)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 3000 }), fc.constantFrom(['[', ']'], ['{"a":', '}']))
      .map(
        ([depth, [open, close]]) => `${(open as string).repeat(depth)}1${(close as string).repeat(depth)}`,
      ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 20_000 }).map((n) => `[${Array(n).fill('[]').join(',')}]`),
  },
)
const member = (name: string, value: fc.Arbitrary<string>) =>
  fc.option(
    value.map((v) => `"${name}": ${v}`),
    { nil: undefined },
  )
const structured = fc
  .tuple(
    member('number', jsonValue),
    member('algorithm', fc.oneof(jsonValue, fc.constant('"PrimeChecker"'))),
    member(
      'params',
      fc.oneof(
        jsonValue,
        member('number', jsonValue).map((m) => `{${m ?? ''}}`),
      ),
    ),
    member(
      'webhook',
      fc.oneof(
        jsonValue,
        fc.webUrl().map((u) => JSON.stringify(u)),
      ),
    ),
  )
  .map((members) => `{${members.filter((m) => m !== undefined).join(', ')}}`)
// Valid-looking JSON cut or spliced with JSON's own characters.
const mangled = fc
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL is one of the characters tried.
  .tuple(structured, fc.nat(), fc.stringMatching(/^[{}[\]":,.\-+eE0-9 \\ntruefalsn\u0000\u00e9]{0,8}$/))
  .map(
    ([text, at, junk]) => text.slice(0, at % (text.length + 1)) + junk + text.slice(at % (text.length + 1)),
  )
const body = fc.oneof(
  { weight: 4, arbitrary: structured },
  { weight: 2, arbitrary: mangled },
  { weight: 1, arbitrary: jsonValue },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constant(undefined) },
)
const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'text/plain',
      'application/vnd.x+json; charset=utf-8',
      'json',
      '/',
      ';',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 30 }) },
)
const jobId = fc.oneof(
  fc.stringMatching(/^[0-9a-f]{12}$/),
  fc.string({ maxLength: 200 }).map(encodeURIComponent),
  fc.constantFrom('%ZZ', '%C0%AE', '%', '%00', 'a'.repeat(101), '..%2F..%2Fetc'),
)

function assertShape(path: string, status: number, text: string) {
  assert.ok(
    status < 500 || (status === 503 && path !== 'GET /jobs'),
    `${path}: ${status} ${text.slice(0, 300)}`,
  )
  assert.doesNotMatch(text, LEAK, `${path}: ${text.slice(0, 300)}`)
  const json = JSON.parse(text) as Record<string, unknown>
  if (status === 422) {
    assert.ok(Array.isArray(json.detail) && json.detail.length > 0, text)
    for (const problem of json.detail as Record<string, unknown>[]) {
      assert.equal(typeof problem.type, 'string', text)
      assert.equal(typeof problem.msg, 'string', text)
      assert.ok(Array.isArray(problem.loc), text)
    }
    return
  }
  if (status === 404 && json.detail === 'Not Found') return
  if (status === 405) return assert.deepEqual(json, { detail: 'Method Not Allowed' })
  if (status < 300) {
    const keys = path === 'POST /invoke' ? ['metadata', 'request_id', 'result', 'status'] : []
    for (const key of keys) assert.ok(key in json, `${path}: ${key} in ${text.slice(0, 200)}`)
    if (path === 'POST /jobs') assert.match(json.job_id as string, /^[0-9a-f]{12}$/)
    return
  }
  const error = (path === 'POST /invoke' ? json : json.detail) as Record<string, unknown>
  assert.deepEqual(
    Object.keys(error).sort(),
    ['details', 'error', 'message', 'request_id'],
    `${path}: ${text}`,
  )
  assert.equal(typeof error.error, 'string')
  assert.ok(text.length < 8192, `${path}: an error of ${text.length} characters`)
}

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({
      jobFactorBudgetMs: 100,
      invokeFactorBudgetMs: 100,
      maxPendingJobs: 100_000,
    })
  })
  after(() => server.close())

  test('POST /invoke and POST /jobs: no 5xx, contract shapes, no leaks', { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/invoke', '/jobs'), body, contentType, async (path, text, type) => {
        const response = await fetch(`${server.url}${path}`, {
          method: 'POST',
          body: text,
          headers: type === '' ? {} : { 'content-type': type },
        })
        assertShape(`POST ${path}`, response.status, await response.text())
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
  })

  test('GET /jobs/{job_id} and other methods: no 5xx, contract shapes, no leaks', {
    timeout: 600_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(jobId, fc.constantFrom('GET', 'GET', 'POST', 'DELETE', 'PUT'), async (id, method) => {
        const response = await fetch(`${server.url}/jobs/${id}`, { method })
        assertShape(
          method === 'GET' ? 'GET /jobs' : `${method} /jobs/{id}`,
          response.status,
          await response.text(),
        )
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    )
  })
})

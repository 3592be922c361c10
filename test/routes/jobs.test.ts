// The job endpoints before the job store exists: every check before the store answers as the contract
// says, and an accepted job is 503 SERVICE_UNAVAILABLE with Retry-After.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'

let server: TestApp
before(async () => {
  server = await startApp()
})
after(() => server.close())

const post = (body: string) => postRaw(`${server.url}/jobs`, body)

function assertWrapped(json: unknown, code: string, requestId: string | null) {
  const { detail } = json as { detail: Record<string, unknown> }
  assert.deepEqual(Object.keys(detail).sort(), ['details', 'error', 'message', 'request_id'])
  assert.equal(detail.error, code)
  assert.equal(typeof detail.message, 'string')
  assert.equal(detail.request_id, requestId)
  return detail
}

describe('POST /jobs', () => {
  test('422 for a body that fails the schema, one entry per problem', async () => {
    const response = await post('{"params": [], "webhook": 5}')
    assert.equal(response.status, 422)
    assert.deepEqual(response.json, {
      detail: [
        {
          type: 'missing',
          loc: ['body', 'algorithm'],
          msg: 'Field required',
          input: { params: [], webhook: 5 },
        },
        { type: 'dict_type', loc: ['body', 'params'], msg: 'Input should be a valid dictionary', input: [] },
        { type: 'string_type', loc: ['body', 'webhook'], msg: 'Input should be a valid string', input: 5 },
      ],
    })
  })

  test('404 ALGORITHM_NOT_FOUND lists the known algorithms, case-sensitively', async () => {
    const response = await post('{"algorithm": "primechecker", "params": {"number": 7}}')
    assert.equal(response.status, 404)
    const detail = assertWrapped(response.json, 'ALGORITHM_NOT_FOUND', response.headers.get('x-request-id'))
    assert.deepEqual(detail.details, { available_algorithms: ['PrimeChecker'] })
  })

  test('400 VALIDATION_ERROR for bad params, naming params.number', async () => {
    const cases: [string, unknown][] = [
      ['{}', null],
      ['{"number": "abc"}', 'abc'],
      ['{"number": 2.5}', 2.5],
      [`{"number": "${'9'.repeat(4301)}"}`, '9999999999…(4301 digits)'],
    ]
    for (const [params, value] of cases) {
      const response = await post(`{"algorithm": "PrimeChecker", "params": ${params}}`)
      assert.equal(response.status, 400, params)
      const detail = assertWrapped(response.json, 'VALIDATION_ERROR', response.headers.get('x-request-id'))
      assert.deepEqual(detail.details, { field: 'params.number', value })
    }
  })

  test('503 SERVICE_UNAVAILABLE with Retry-After while there is no job store', async () => {
    const response = await post(
      '{"algorithm": "PrimeChecker", "params": {"number": 7, "extra": true}, "webhook": null}',
    )
    assert.equal(response.status, 503)
    assert.match(response.headers.get('retry-after') ?? '', /^[0-9]+$/)
    assertWrapped(response.json, 'SERVICE_UNAVAILABLE', response.headers.get('x-request-id'))
  })

  test('413 PAYLOAD_TOO_LARGE is wrapped under detail', async () => {
    const response = await post(
      `{"algorithm": "PrimeChecker", "params": {"number": "${'1'.repeat(1_100_000)}"}}`,
    )
    assert.equal(response.status, 413)
    assertWrapped(response.json, 'PAYLOAD_TOO_LARGE', response.headers.get('x-request-id'))
  })
})

describe('GET /jobs/{job_id}', () => {
  test('422 string_pattern_mismatch for an id that is not 12 lowercase hex characters', async () => {
    for (const id of ['xyz', '0123456789AB', '0123456789abc']) {
      const response = await fetch(`${server.url}/jobs/${id}`)
      assert.equal(response.status, 422, id)
      assert.deepEqual(await response.json(), {
        detail: [
          {
            type: 'string_pattern_mismatch',
            loc: ['path', 'job_id'],
            msg: "String should match pattern '^[0-9a-f]{12}$'",
            input: id,
            ctx: { pattern: '^[0-9a-f]{12}$' },
          },
        ],
      })
    }
  })

  test('503 SERVICE_UNAVAILABLE for a well-formed id while there is no job store', async () => {
    const response = await fetch(`${server.url}/jobs/0123456789ab`)
    assert.equal(response.status, 503)
    assertWrapped(await response.json(), 'SERVICE_UNAVAILABLE', response.headers.get('x-request-id'))
  })
})

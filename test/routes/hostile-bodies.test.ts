// Hostile bodies and edges of the request get the contract's 4xx shapes,
// with bounded answers: no 5xx, no stack trace, no echo that grows with what was sent.
import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'
import { rawExchange } from '../helpers/raw-http.js'

let server: TestApp
before(async () => {
  server = await startApp()
})
after(() => server.close())

const MiB = 1 << 20
const nested = (depth: number, open: string, close: string) => `${open.repeat(depth)}${close.repeat(depth)}`
// Where a hostile value goes: each field the schemas read, on both endpoints.
const PLACES: [string, string, (value: string) => string][] = [
  ['/invoke number', '/invoke', (v) => `{"number": ${v}}`],
  ['/jobs algorithm', '/jobs', (v) => `{"algorithm": ${v}, "params": {"number": 7}}`],
  ['/jobs params', '/jobs', (v) => `{"algorithm": "PrimeChecker", "params": ${v}}`],
  ['/jobs params.number', '/jobs', (v) => `{"algorithm": "PrimeChecker", "params": {"number": ${v}}}`],
  [
    '/jobs webhook',
    '/jobs',
    (v) => `{"algorithm": "PrimeChecker", "params": {"number": 7}, "webhook": ${v}}`,
  ],
  [
    '/jobs unknown member',
    '/jobs',
    (v) => `{"algorithm": "PrimeChecker", "params": {"number": 7, "x": ${v}}}`,
  ],
]

function assertContractError(status: number, text: string, what: string) {
  assert.ok(status >= 400 && status < 500, `${what}: ${status} ${text.slice(0, 300)}`)
  assert.ok(text.length < 4096, `${what}: the answer has ${text.length} characters`)
  assert.doesNotMatch(text, /call stack|RangeError|FST_ERR|statusCode|at \w+ \(|node_modules|\/src\//, what)
  const body = JSON.parse(text) as Record<string, unknown>
  const flat = (body.detail ?? body) as Record<string, unknown>
  assert.ok(
    Array.isArray(body.detail) || typeof flat.error === 'string',
    `${what}: a 422 list or an error body: ${text.slice(0, 200)}`,
  )
}

describe('item 1: deep and wide values get a bounded 4xx', () => {
  const values: [string, string][] = [
    ['arrays 5000 deep', nested(5000, '[', ']')],
    ['objects 5000 deep', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`],
    ['arrays 30 deep (within the depth limit)', nested(30, '[', ']')],
    ['objects 30 deep (within the depth limit)', `${'{"a":'.repeat(30)}1${'}'.repeat(30)}`],
    ['9000 empty arrays (within the value limit)', `[${Array(9000).fill('[]').join(',')}]`],
    [
      'a megabyte of empty arrays',
      `[${Array(Math.floor((MiB - 100) / 3))
        .fill('[]')
        .join(',')}]`,
    ],
    ['an object of 5000 members', `{${Array.from({ length: 5000 }, (_, i) => `"k${i}": [${i}]`).join(',')}}`],
    ['a long string', `"${'x'.repeat(MiB - 200)}"`],
  ]
  for (const [place, path, body] of PLACES) {
    test(place, async () => {
      for (const [name, value] of values) {
        const response = await postRaw(`${server.url}${path}`, body(value))
        // Unknown members of params are ignored: within the limits, such a job is taken.
        if (place.endsWith('unknown member') && response.status === 202) continue
        assertContractError(response.status, response.text, `${place}, ${name}`)
      }
    })
  }

  test('nesting past the limit is json_invalid at the offset where it passed it', async () => {
    const response = await postRaw(`${server.url}/invoke`, `{"number": ${nested(5000, '[', ']')}}`)
    assert.equal(response.status, 422)
    assert.deepEqual(response.json, {
      detail: [
        {
          type: 'json_invalid',
          loc: ['body', 11 + 31],
          msg: 'JSON decode error',
          input: {},
          ctx: {
            error: 'nesting is too deep',
            bound: 'maxJsonDepth',
            limit: 32,
            // The built-in's contract is not the deployment's: the setting is what raises it.
            how_to_raise: 'raise it with ALGOSERVE_MAX_JSON_DEPTH',
          },
        },
      ],
    })
  })

  test('an echoed input is shortened: its first members and a count of the rest', async () => {
    const response = await postRaw(
      `${server.url}/invoke`,
      `{"number": [${Array(100).fill('"abc"').join(',')}]}`,
    )
    assert.equal(response.status, 422)
    const [problem] = (response.json as { detail: { input: unknown[] }[] }).detail
    assert.deepEqual(problem?.input, [...Array(8).fill('abc'), '…(92 more items)'])
  })

  test('a 400 names params.number with its value shortened the same way', async () => {
    const response = await postRaw(
      `${server.url}/jobs`,
      `{"algorithm": "PrimeChecker", "params": {"number": ${nested(20, '[', ']')}}}`,
    )
    assert.equal(response.status, 400)
    const { detail } = response.json as { detail: { details: { field: string; value: unknown } } }
    assert.equal(detail.details.field, 'params.number')
    assert.deepEqual(detail.details.value, [[[['…(an array of 1 items)']]]])
  })
})

describe('item 6: the contract at the edges', () => {
  const problem = (type: string, loc: (string | number)[], msg: string, input: unknown) => ({
    type,
    loc,
    msg,
    input,
  })

  test('a number where the body object belongs is model_attributes_type on ["body"]', async () => {
    for (const [path, body] of [
      ['/invoke', '7'],
      ['/jobs', '7'],
      ['/invoke', '123456789012345678901234567890'],
    ] as const) {
      const response = await postRaw(`${server.url}${path}`, body)
      assert.equal(response.status, 422, `${path} ${body}: ${response.text}`)
      const [first] = (response.json as { detail: Record<string, unknown>[] }).detail
      assert.deepEqual(first?.type, 'model_attributes_type')
      assert.deepEqual(first?.loc, ['body'])
    }
  })

  test('"params": 7 is dict_type on ["body","params"]', async () => {
    const response = await postRaw(`${server.url}/jobs`, '{"algorithm": "PrimeChecker", "params": 7}')
    assert.equal(response.status, 422)
    assert.deepEqual(response.json, {
      detail: [problem('dict_type', ['body', 'params'], 'Input should be a valid dictionary', 7)],
    })
  })

  test('an empty Content-Type is absent: the body is read as JSON', async () => {
    for (const contentType of ['', '   ']) {
      const answer = await rawExchange(
        server.url,
        `POST /invoke HTTP/1.1\r\nHost: x\r\nContent-Type: ${contentType}\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{"number": 7}`,
      )
      assert.equal(answer.status, 200, `"${contentType}": ${answer.body}`)
      assert.match(answer.body, /"is_prime":true/)
    }
  })

  test('a malformed Content-Type is 422 model_attributes_type on ["body"]', async () => {
    for (const contentType of [
      'application',
      'json',
      '/',
      'application/',
      'appl ication/json',
      '; charset=utf-8',
    ]) {
      const response = await postRaw(`${server.url}/invoke`, '{"number": 7}', { 'content-type': contentType })
      assert.equal(response.status, 422, `"${contentType}": ${response.text}`)
      assert.deepEqual(response.json, {
        detail: [
          problem(
            'model_attributes_type',
            ['body'],
            `Input should be a valid dictionary or object to extract fields from: Content-Type '${contentType}' is malformed; send application/json`,
            '{"number": 7}',
          ),
        ],
      })
    }
  })

  test('a job id badly encoded or of any length is 422 string_pattern_mismatch; other methods 405', async () => {
    for (const id of ['%ZZ', '%C0%AE', '%', 'a'.repeat(101), 'b'.repeat(5000), '0123456789ab%00']) {
      const response = await fetch(`${server.url}/jobs/${id}`)
      assert.equal(response.status, 422, `${id.slice(0, 20)}: ${response.status}`)
      const { detail } = (await response.json()) as { detail: Record<string, unknown>[] }
      assert.equal(detail.length, 1)
      assert.equal(detail[0]?.type, 'string_pattern_mismatch')
      assert.deepEqual(detail[0]?.loc, ['path', 'job_id'])
      assert.deepEqual(detail[0]?.ctx, { pattern: '^[0-9a-f]{12}$' })
      assert.ok(response.headers.get('x-request-id'))
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const other = await fetch(`${server.url}/jobs/${id}`, { method })
        assert.equal(other.status, 405, `${method} ${id.slice(0, 20)}`)
        assert.deepEqual(await other.json(), { detail: 'Method Not Allowed' })
      }
    }
  })

  // Refused by node:http before any route: still JSON in the flat error shape, with a request id.
  const preRouting: [string, string | Buffer, number, string][] = [
    [
      'bad header bytes',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad\u0001: 1\r\n\r\n',
      400,
      'VALIDATION_ERROR',
    ],
    [
      'bad framing',
      'POST /invoke HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n',
      400,
      'VALIDATION_ERROR',
    ],
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400, 'VALIDATION_ERROR'],
    [
      'bad chunked framing',
      'POST /invoke HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      400,
      'VALIDATION_ERROR',
    ],
    [
      'headers too large',
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'REQUEST_HEADER_FIELDS_TOO_LARGE',
    ],
    [
      'an unmet Expect',
      'POST /invoke HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 13\r\n\r\n',
      417,
      'EXPECTATION_FAILED',
    ],
  ]
  for (const [name, request, status, code] of preRouting) {
    test(`${name}: ${status} in the flat error shape with x-request-id`, async () => {
      const answer = await rawExchange(server.url, request)
      assert.equal(answer.status, status, `${name}: ${answer.status} ${answer.body}`)
      const id = answer.headers['x-request-id']
      assert.ok(id, 'x-request-id')
      assert.match(answer.headers['content-type'] ?? '', /^application\/json/)
      const body = JSON.parse(answer.body) as Record<string, unknown>
      assert.deepEqual(Object.keys(body).sort(), ['details', 'error', 'message', 'request_id'])
      assert.equal(body.error, code)
      assert.equal(body.request_id, id)
    })
  }

  test('a request whose headers do not arrive in time: 408 in the flat shape', async () => {
    const slow = await startApp({ headersTimeoutMs: 300, requestTimeoutMs: 300 })
    try {
      const answer = await rawExchange(slow.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 5000)
      assert.equal(answer.status, 408, answer.body)
      assert.ok(answer.headers['x-request-id'])
      assert.equal((JSON.parse(answer.body) as { error: string }).error, 'REQUEST_TIMEOUT')
    } finally {
      await slow.close()
    }
  })

  test('no Content-Type at all is still read as JSON (node:http, no fetch default)', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(
        `${server.url}/invoke`,
        { method: 'POST', headers: { 'content-length': 13 } },
        (response) => {
          response.resume()
          resolve(response.statusCode ?? 0)
        },
      )
      request.on('error', reject)
      request.end('{"number": 7}')
    })
    assert.equal(status, 200)
  })
})

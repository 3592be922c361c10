import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, test } from 'node:test'
import { postRaw } from '../helpers/app.js'
import { parseExact } from '../helpers/json.js'
import { RSA_100 } from '../helpers/numbers.js'
import { type ServedApp, serveApp } from '../helpers/served.js'
import { sleep } from '../helpers/time.js'

let server: ServedApp
let url: string

before(async () => {
  server = await serveApp()
  url = `${server.url}/invoke`
})
// A service that did not start has nothing to close.
after(() => server?.close())

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function invoke(body: string, headers?: Record<string, string>) {
  const response = await postRaw(url, body, headers)
  return { ...response, exact: response.text ? parseExact(response.text) : undefined }
}

type Result = {
  number: bigint
  is_prime: boolean
  factors: bigint[]
  factorization_complete: boolean
  algorithm: string
}

async function result(number: string): Promise<Result> {
  const response = await invoke(`{"number": ${number}}`)
  assert.equal(response.status, 200, response.text)
  return (response.exact as { result: Result }).result
}

describe('POST /invoke 200', () => {
  test('answers the whole InvokeResponse for a small prime', async () => {
    const response = await invoke('{"number": 97}')
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
    const body = response.json as Record<string, unknown>
    assert.deepEqual(Object.keys(body).sort(), ['metadata', 'request_id', 'result', 'status'])
    assert.match(body.request_id as string, UUID)
    assert.equal(response.headers.get('x-request-id'), body.request_id)
    assert.equal(body.status, 'success')
    assert.deepEqual(body.result, {
      number: 97,
      is_prime: true,
      factors: [],
      factorization_complete: true,
      algorithm: 'trial_division',
    })
    const metadata = body.metadata as Record<string, unknown>
    assert.equal(metadata.algorithm, 'PrimeChecker')
    assert.equal(metadata.version, '1.0.0')
    assert.equal(typeof metadata.elapsed_time, 'number')
    assert.ok((metadata.elapsed_time as number) >= 0 && (metadata.elapsed_time as number) < 1)
  })

  test('keeps big integers exact in and out', async () => {
    const response = await invoke('{"number": 18446744073709551617}')
    assert.equal(response.status, 200)
    assert.match(response.text, /"number":18446744073709551617[,}]/)
    assert.match(response.text, /"factors":\[274177,67280421310721\]/)
    // 2^53 + 1 would become 2^53 through a double.
    const near = await invoke('{"number": 9007199254740993}')
    assert.match(near.text, /"number":9007199254740993[,}]/)
    assert.match(near.text, /"factors":\[3,107,28059810762433\]/)
  })

  test('follows the sign and edge conventions of the contract (docs/api.md)', async () => {
    const cases: [string, boolean, bigint[]][] = [
      ['12', false, [2n, 2n, 3n]],
      ['-12', false, [-1n, 2n, 2n, 3n]],
      ['-7', false, [-1n, 7n]],
      ['97', true, []],
      ['2', true, []],
      ['0', false, []],
      ['1', false, []],
      ['-1', false, [-1n]],
      ['4', false, [2n, 2n]],
    ]
    for (const [number, isPrime, factors] of cases) {
      const r = await result(number)
      assert.equal(r.number, BigInt(number), number)
      assert.equal(r.is_prime, isPrime, number)
      assert.deepEqual(r.factors, factors, number)
      assert.equal(r.factorization_complete, true, number)
    }
  })

  test('accepts decimal strings and floats with no fractional part', async () => {
    const cases: [string, bigint][] = [
      ['"18446744073709551617"', 18446744073709551617n],
      ['"-0012"', -12n],
      ['7.0', 7n],
      ['1e3', 1000n],
      ['1.5e1', 15n],
      ['-2.0E0', -2n],
      ['120e-1', 12n],
    ]
    for (const [literal, expected] of cases) {
      const r = await result(literal)
      assert.equal(r.number, expected, literal)
    }
    const response = await invoke('{"number": "18446744073709551617"}')
    assert.match(response.text, /"number":18446744073709551617[,}]/, 'a string comes back as a JSON integer')
  })

  test('names the primality method by the size of |n|', async () => {
    const cases: [string, string, boolean][] = [
      ['4294967291', 'trial_division', true],
      ['-4294967291', 'trial_division', false],
      ['4294967311', 'deterministic_miller_rabin', true],
      ['18446744073709551557', 'deterministic_miller_rabin', true],
      ['18446744073709551629', 'baillie_psw', true],
    ]
    for (const [number, algorithm, isPrime] of cases) {
      const r = await result(number)
      assert.equal(r.algorithm, algorithm, number)
      assert.equal(r.is_prime, isPrime, number)
    }
  })

  test('reports an incomplete factorisation when the budget runs out', async () => {
    const r = await result(RSA_100)
    assert.equal(r.is_prime, false)
    assert.equal(r.factorization_complete, false)
    assert.equal(
      r.factors.reduce((a, b) => a * b, 1n),
      BigInt(RSA_100),
    )
  })

  test('takes a number of exactly max_digits digits', async () => {
    const r = await result(`1${'0'.repeat(4299)}`)
    assert.equal(r.factors.length, 2 * 4299)
    assert.equal(r.factors[0], 2n)
    assert.equal(r.factors.at(-1), 5n)
  })
})

describe('POST /invoke 422', () => {
  const cases: [string, string | undefined, Record<string, unknown>][] = [
    ['missing number', '{}', { type: 'missing', loc: ['body', 'number'], msg: 'Field required', input: {} }],
    [
      'null',
      '{"number": null}',
      { type: 'int_type', loc: ['body', 'number'], msg: 'Input should be a valid integer', input: null },
    ],
    [
      'boolean',
      '{"number": true}',
      { type: 'int_type', loc: ['body', 'number'], msg: 'Input should be a valid integer', input: true },
    ],
    [
      'array',
      '{"number": [7]}',
      { type: 'int_type', loc: ['body', 'number'], msg: 'Input should be a valid integer', input: [7] },
    ],
    [
      'object',
      '{"number": {}}',
      { type: 'int_type', loc: ['body', 'number'], msg: 'Input should be a valid integer', input: {} },
    ],
    [
      'fraction',
      '{"number": 1.5}',
      {
        type: 'int_from_float',
        loc: ['body', 'number'],
        msg: 'Input should be a valid integer, got a number with a fractional part',
        input: 1.5,
      },
    ],
    [
      'non-digit string',
      '{"number": "12a"}',
      {
        type: 'int_parsing',
        loc: ['body', 'number'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: '12a',
      },
    ],
    [
      'decimal string',
      '{"number": "7.0"}',
      {
        type: 'int_parsing',
        loc: ['body', 'number'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: '7.0',
      },
    ],
    [
      'body is an array',
      '[1]',
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: [1],
      },
    ],
    ['body is null', 'null', { type: 'missing', loc: ['body'], msg: 'Field required', input: null }],
    ['empty body', undefined, { type: 'missing', loc: ['body'], msg: 'Field required', input: null }],
  ]
  for (const [name, body, problem] of cases) {
    test(name, async () => {
      const response = await invoke(body as string)
      assert.equal(response.status, 422, response.text)
      assert.deepEqual(response.json, { detail: [problem] })
    })
  }

  test('invalid JSON is json_invalid at its character offset', async () => {
    const response = await invoke('{"number": tru}')
    assert.equal(response.status, 422)
    const { detail } = response.json as { detail: Record<string, unknown>[] }
    assert.equal(detail.length, 1)
    const problem = detail[0] as Record<string, unknown>
    assert.equal(problem.type, 'json_invalid')
    assert.equal(problem.msg, 'JSON decode error')
    assert.deepEqual(problem.input, {})
    assert.deepEqual(problem.loc, ['body', 11])
    // Python's message, as FastAPI reports it.
    assert.equal((problem.ctx as { error: string }).error, 'Expecting value')
  })

  test('JSON nested past the parser depth is json_invalid without engine messages', async () => {
    const response = await invoke('['.repeat(100_000))
    assert.equal(response.status, 422)
    assert.doesNotMatch(response.text, /call stack|RangeError/)
    assert.match(response.text, /"type":"json_invalid".*"error":"nesting is too deep"/)
  })

  test('a Content-Type that is not JSON is model_attributes_type, its message naming the type', async () => {
    for (const [contentType, named] of [
      ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
      ['text/plain; charset=utf-8', 'text/plain'],
      ['multipart/form-data; boundary=x', 'multipart/form-data'],
    ]) {
      const response = await invoke('number=7', { 'content-type': contentType as string })
      assert.equal(response.status, 422)
      assert.deepEqual(response.json, {
        detail: [
          {
            type: 'model_attributes_type',
            loc: ['body'],
            msg: `Input should be a valid dictionary or object to extract fields from: Content-Type '${named}' is not JSON; send application/json`,
            input: 'number=7',
          },
        ],
      })
    }
  })

  test('a body with no Content-Type is read as JSON', async () => {
    // fetch always adds a Content-Type to a string body, so this one goes out through node:http.
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(url, { method: 'POST', headers: { 'content-length': 13 } }, (response) => {
        let text = ''
        response.on('data', (chunk) => {
          text += chunk
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }))
      })
      request.on('error', reject)
      request.end('{"number": 7}')
    })
    assert.equal(status, 200, text)
    assert.match(text, /"is_prime":true/)
  })

  test('a JSON media type with parameters or a +json suffix is JSON', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/vnd.algoserve+json']) {
      const response = await invoke('{"number": 7}', { 'content-type': type })
      assert.equal(response.status, 200, type)
    }
  })

  test('a big fractional literal is echoed exactly', async () => {
    const response = await invoke('{"number": 123456789012345678901234567890.5}')
    assert.equal(response.status, 422)
    assert.match(response.text, /"input":123456789012345678901234567890\.5[,}]/)
  })
})

describe('POST /invoke 400', () => {
  test('more than max_digits digits, as a literal', async () => {
    const digits = `9${'1'.repeat(4300)}`
    const response = await invoke(`{"number": ${digits}}`)
    assert.equal(response.status, 400)
    const body = response.json as Record<string, unknown>
    assert.deepEqual(Object.keys(body).sort(), ['details', 'error', 'message', 'request_id'])
    assert.equal(body.error, 'VALIDATION_ERROR')
    assert.match(body.message as string, /4301 digits.*4300/)
    assert.deepEqual(body.details, { field: 'number', value: '9111111111…(4301 digits)' })
    assert.equal(body.request_id, response.headers.get('x-request-id'))
  })

  test('more than max_digits digits, as a string or an exponent', async () => {
    for (const literal of [`"-${'7'.repeat(5000)}"`, '1e4300', '1e999999999999']) {
      const response = await invoke(`{"number": ${literal}}`)
      assert.equal(response.status, 400, literal)
      assert.equal((response.json as { error: string }).error, 'VALIDATION_ERROR')
    }
  })

  test('a long literal with a fraction is answered at once', async () => {
    // A long run of zeros before another digit once sent a trailing-zero regex into quadratic time.
    const response = await invoke(`{"number": 1${'0'.repeat(900_000)}1.5}`)
    assert.equal(response.status, 422)
    assert.match(response.text, /"type":"int_from_float"/)
    const integral = await invoke(`{"number": 1${'0'.repeat(900_000)}1.0}`)
    assert.equal(integral.status, 400)
    assert.match(integral.text, /900002 digits/)
  })

  test('a megabyte of digits is refused from its text', async () => {
    const response = await invoke(`{"number": "${'1'.repeat(1_000_000)}"}`)
    assert.equal(response.status, 400)
    assert.deepEqual((response.json as { details: unknown }).details, {
      field: 'number',
      value: '1111111111…(1000000 digits)',
    })
  })
})

describe('POST /invoke 413', () => {
  test('a body above max_body_bytes', async () => {
    const response = await invoke(`{"number": "${'1'.repeat(1_100_000)}"}`)
    assert.equal(response.status, 413)
    const body = response.json as Record<string, unknown>
    assert.equal(body.error, 'PAYLOAD_TOO_LARGE')
    assert.equal(typeof body.message, 'string')
    assert.equal(body.request_id, response.headers.get('x-request-id'))
  })
})

describe('request ids', () => {
  test('a well-formed x-request-id is echoed in the header and the body', async () => {
    const id = 'client-id_1.2:3'
    const response = await invoke('{"number": 5}', { 'content-type': 'application/json', 'x-request-id': id })
    assert.equal(response.headers.get('x-request-id'), id)
    assert.equal((response.json as { request_id: string }).request_id, id)
  })

  test('a malformed or too long x-request-id is replaced by a UUID', async () => {
    for (const id of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const response = await invoke('{"number": 5}', {
        'content-type': 'application/json',
        'x-request-id': id,
      })
      assert.match(response.headers.get('x-request-id') ?? '', UUID, id)
      assert.equal((response.json as { request_id: string }).request_id, response.headers.get('x-request-id'))
    }
  })

  test('every request gets a fresh id', async () => {
    const a = await invoke('{"number": 5}')
    const b = await invoke('{"number": 5}')
    assert.notEqual(a.headers.get('x-request-id'), b.headers.get('x-request-id'))
  })
})

describe('unknown paths and methods', () => {
  test('404 for an unknown path', async () => {
    const response = await fetch(`${server.url}/nope`)
    assert.equal(response.status, 404)
    assert.deepEqual(await response.json(), { detail: 'Not Found' })
    assert.ok(response.headers.get('x-request-id'))
  })

  test('a path that cannot be percent-decoded is judged by its route: 404, 405 or 422', async () => {
    const unknown = await fetch(`${server.url}/%zz`)
    assert.equal(unknown.status, 404)
    assert.deepEqual(await unknown.json(), { detail: 'Not Found' })
    assert.match(unknown.headers.get('x-request-id') ?? '', UUID)
    const wrongMethod = await fetch(`${server.url}/jobs/%zz`, { method: 'DELETE' })
    assert.equal(wrongMethod.status, 405)
    assert.equal(wrongMethod.headers.get('allow'), 'GET, HEAD')
  })

  test('405 with Allow for a known path and another method', async () => {
    const response = await fetch(url)
    assert.equal(response.status, 405)
    assert.equal(response.headers.get('allow'), 'POST')
    assert.deepEqual(await response.json(), { detail: 'Method Not Allowed' })
    const jobs = await fetch(`${server.url}/jobs/0123456789ab`, { method: 'DELETE' })
    assert.equal(jobs.status, 405)
    assert.equal(jobs.headers.get('allow'), 'GET, HEAD')
  })
})

describe('isolation', () => {
  test('/healthz keeps answering while a 4300-digit prime is tested', async (t) => {
    // nextprime(10^4299) by PARI/GP 2.15.2 on this machine: 10^4299 + 3187.
    // The test shares its event loop with the server: the body is made before anything is timed.
    const body = `{"number": ${10n ** 4299n + 3187n}}`
    await (await fetch(`${server.url}/healthz`)).arrayBuffer()
    let heavyDone = false
    const heavy = postRaw(url, body).then((response) => {
      heavyDone = true
      return response
    })
    const latencies: number[] = []
    while (!heavyDone) {
      const start = performance.now()
      const response = await fetch(`${server.url}/healthz`)
      await response.arrayBuffer()
      if (!heavyDone) latencies.push(performance.now() - start)
      assert.equal(response.status, 200)
      await sleep(20)
    }
    const response = await heavy
    assert.equal(response.status, 200)
    assert.match(response.text, /"is_prime":true.*"algorithm":"baillie_psw"/)
    assert.ok(latencies.length >= 5, `only ${latencies.length} health checks answered during the heavy call`)
    t.diagnostic(
      `first five: ${latencies
        .slice(0, 5)
        .map((l) => l.toFixed(1))
        .join(', ')}`,
    )
    latencies.sort((a, b) => a - b)
    t.diagnostic(
      `healthz during the heavy call: ${latencies.length} answers, median ${latencies[latencies.length >> 1]?.toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`,
    )
  })
})

describe('client disconnects', () => {
  test('an /invoke whose client goes away stops its run', async () => {
    const metric = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text()
      return Number(/^algorithm_executions_total\{[^}]*status="success"\} ([0-9]+)/m.exec(text)?.[1] ?? 0)
    }
    const before = await metric()
    const rsa129 =
      '114381625757888867669235779976146612010218296721242362562561842935706935245733897830597123563958705058989075147599290026879543541'
    const controller = new AbortController()
    const heavy = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"number": ${rsa129}}`,
      signal: controller.signal,
    })
    await sleep(200)
    controller.abort()
    await assert.rejects(heavy)
    // Past the 2 s factorisation budget, a run that was not stopped would have been counted.
    await sleep(2500)
    assert.equal(await metric(), before)
  })
})

describe('hostile input', () => {
  test('never a 500, a crash or a hang: each answer is one of the contract', async () => {
    const bodies = [
      '['.repeat(100_000),
      `{"number": ${'['.repeat(50_000)}${']'.repeat(50_000)}}`,
      '{"number": 1e-999999999999}',
      '{"number": -0.0e0}',
      '{"number": NaN}',
      '{"number": Infinity}',
      '{"number": "\\u0031\\u0032"}',
      '{"number": "１２"}',
      '{"number": 7, "number": 8}',
      '{"__proto__": {"number": 7}}',
      '{"constructor": {"prototype": {"number": 7}}, "number": 5}',
      '\uFEFF{"number": 7}',
      '{"number": 7}garbage',
      '"just a string"',
      '12345',
      '\u0000',
    ]
    // Seeded random bodies: bytes from a small alphabet of JSON's own characters.
    let seed = 20261121
    const next = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
      return seed
    }
    const alphabet = '{}[]":,.-+eE0123456789 numbertrufalsn\\'
    for (let i = 0; i < 200; i++) {
      const length = next() % 40
      let body = '{"number": '
      for (let j = 0; j < length; j++) body += alphabet[next() % alphabet.length]
      bodies.push(body)
    }
    for (const body of bodies) {
      const response = await invoke(body)
      assert.ok([200, 400, 422].includes(response.status), `${response.status} for ${body.slice(0, 60)}`)
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
      assert.notEqual(response.json, undefined, `the answer is JSON for ${body.slice(0, 60)}`)
    }
    const health = await fetch(`${server.url}/healthz`)
    assert.equal(health.status, 200, 'the service is still up')
  })
})

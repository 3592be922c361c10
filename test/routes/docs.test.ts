import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { LATENCY_BOUNDS_MS } from '../../src/jobs/summary.js'
import { RETRY_WAITS_MS } from '../../src/webhooks/policy.js'
import { ATTEMPT_TIMEOUT_MS } from '../../src/webhooks/sender.js'
import { startApp, type TestApp } from '../helpers/app.js'
import { requestBodyValidator } from '../helpers/document-validator.js'

let server: TestApp
before(async () => {
  server = await startApp()
})
after(() => server.close())

type Media = Record<
  string,
  { example?: unknown; examples?: Record<string, { value: unknown }>; schema?: unknown }
>
type Operation = {
  operationId?: string
  tags?: string[]
  security?: unknown
  parameters?: { $ref?: string; name?: string }[]
  requestBody?: { content: Media }
  responses: Record<string, { content?: Media; headers?: Record<string, unknown> }>
}
type Document = {
  openapi: string
  info: { version: string; title: string }
  servers?: { url: string }[]
  tags?: { name: string }[]
  security?: unknown
  webhooks?: Record<string, Record<string, Operation>>
  paths: Record<string, Record<string, Operation>>
  components: {
    schemas: Record<string, unknown>
    securitySchemes?: unknown
    parameters?: Record<string, { schema: { type: string; pattern?: string }; description: string }>
  }
}

const operations = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
  )

/** The status each error code of the contract (and of the opt-in additions) is sent with. */
const STATUS_OF_CODE: Record<string, string> = {
  VALIDATION_ERROR: '400',
  UNAUTHORIZED: '401',
  ALGORITHM_NOT_FOUND: '404',
  JOB_NOT_FOUND: '404',
  JOB_ALREADY_FINISHED: '409',
  IDEMPOTENCY_KEY_REUSED: '409',
  PAYLOAD_TOO_LARGE: '413',
  RATE_LIMITED: '429',
  ALGORITHM_ERROR: '500',
  INTERNAL_ERROR: '500',
  SERVICE_UNAVAILABLE: '503',
}

describe('GET /openapi.json', () => {
  let document: Document
  before(async () => {
    const response = await fetch(`${server.url}/openapi.json`)
    assert.equal(response.status, 200)
    document = (await response.json()) as Document
  })

  test('is OpenAPI 3.1 with interface version 1.0.0', () => {
    assert.match(document.openapi, /^3\.1\./)
    assert.equal(document.info.version, '1.0.0')
  })

  test('names its components as the interface does', () => {
    for (const name of [
      'InvokeRequest',
      'InvokeResponse',
      'JobRequest',
      'JobCreateResponse',
      'JobStatusResponse',
      'JobStatus',
      'ErrorResponse',
      'HTTPValidationError',
      'ValidationError',
      'HealthResponse',
      'ReadinessResponse',
    ]) {
      assert.ok(name in document.components.schemas, name)
    }
    assert.ok(!Object.keys(document.components.schemas).some((name) => name.startsWith('def-')))
  })

  test('has every path, method and status code of the interface and of job control, and not the documentation routes', () => {
    const expected: Record<string, Record<string, string[]>> = {
      '/invoke': { post: ['200', '400', '413', '422', '500', '503'] },
      '/algorithms': { get: ['200'] },
      '/algorithms/{name}': { get: ['200', '404'] },
      '/algorithms/PrimeChecker/invoke': { post: ['200', '400', '413', '422', '500', '503'] },
      '/algorithms/{name}/versions/{version}': { get: ['200', '404'] },
      '/algorithms/PrimeChecker/versions/1.0.0/invoke': { post: ['200', '400', '413', '422', '500', '503'] },
      // 409 only with an Idempotency-Key, and GET /jobs, are job control (tag job-control).
      '/jobs': { post: ['202', '400', '404', '409', '413', '422', '503'], get: ['200', '422', '503'] },
      '/jobs/{job_id}': { get: ['200', '404', '422', '503'] },
      '/jobs/{job_id}/cancel': { post: ['200', '404', '409', '422', '503'] },
      '/jobs/{job_id}/deliveries': { get: ['200', '404', '422', '503'] },
      '/jobs/{job_id}/events': { get: ['200', '204', '404', '422', '503'] },
      '/job-summary': { get: ['200', '503'] },
      '/healthz': { get: ['200'] },
      '/readyz': { get: ['200', '503'] },
      '/metrics': { get: ['200'] },
    }
    assert.deepEqual(Object.keys(document.paths).sort(), Object.keys(expected).sort())
    for (const [path, methods] of Object.entries(expected)) {
      for (const [method, statuses] of Object.entries(methods)) {
        const operation = document.paths[path]?.[method]
        assert.ok(operation, `${method} ${path}`)
        assert.deepEqual(Object.keys(operation.responses).sort(), statuses, `${method} ${path}`)
      }
    }
  })
})

describe('the OpenAPI document reads as ours and is exact', () => {
  let document: Document
  before(async () => {
    document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document
  })

  test('has a relative server, the four tags, and no security (no keys are set)', () => {
    assert.equal(document.info.title, 'Algoserve')
    assert.deepEqual(document.servers, [{ url: '/', description: 'This service' }])
    assert.deepEqual(
      document.tags?.map((tag) => tag.name),
      ['algorithms', 'jobs', 'operations', 'job-control'],
    )
    assert.equal(document.security, undefined)
    assert.equal(document.components.securitySchemes, undefined)
    for (const { operation } of operations(document)) assert.equal(operation.security, undefined)
  })

  test('the x-request-id parameter refuses no value the service accepts, and says which it keeps', async () => {
    const parameter = document.components.parameters?.RequestId
    assert.ok(parameter)
    assert.deepEqual(parameter.schema, { type: 'string' })
    assert.match(
      parameter.description,
      /Any value is accepted: one that matches `\^\[A-Za-z0-9\._:-\]\{1,128\}\$`/,
    )
    assert.match(parameter.description, /any other is replaced by a fresh UUID/)
    // What the service does with them: kept, or replaced, never refused.
    for (const [sent, kept] of [
      ['order-17.retry:2', true],
      ['has space', false],
      ['x'.repeat(129), false],
      ['ünïcode', false],
    ] as const) {
      const response = await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': encodeURI(sent) } })
      assert.equal(response.status, 200, sent)
      const id = response.headers.get('x-request-id') ?? ''
      if (kept) assert.equal(id, sent)
      else assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, sent)
    }
  })

  test('every operation has a unique operationId, a tag, and the x-request-id parameter and header', () => {
    const ids = operations(document).map(({ operation }) => operation.operationId)
    assert.deepEqual(ids.sort(), [
      'cancelJob',
      'createJob',
      'getAlgorithm',
      'getAlgorithmVersion',
      'getJob',
      'getJobDeliveries',
      'getJobSummary',
      'healthz',
      'invoke',
      'invoke_PrimeChecker',
      'invoke_PrimeChecker_1.0.0',
      'listAlgorithms',
      'listJobs',
      'metrics',
      'readyz',
      'streamJobEvents',
    ])
    for (const { path, operation } of operations(document)) {
      assert.equal(operation.tags?.length, 1, path)
      assert.ok(
        operation.parameters?.some((p) => p.$ref === '#/components/parameters/RequestId'),
        `${path} documents x-request-id`,
      )
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.ok(response.headers?.['x-request-id'], `${path} ${status} documents the x-request-id header`)
      }
    }
  })

  test('each error example shows the code of its own status', () => {
    let checked = 0
    for (const { path, operation } of operations(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const media of Object.values(response.content ?? {})) {
          assert.notEqual(media.example, undefined, `${path} ${status} has an example`)
          const example = media.example as { error?: string; detail?: { error?: string } }
          const code = example.error ?? example.detail?.error
          // A failed job's body (a 200) has an `error` too: its message, not a code.
          if (code === undefined || status < '400') continue
          assert.equal(STATUS_OF_CODE[code], status, `${path} ${status} shows ${code}`)
          checked++
        }
      }
    }
    assert.equal(
      checked,
      30,
      'error examples: invoke, invoke_PrimeChecker and invoke_PrimeChecker_1.0.0 400, 413, 500, 503; getAlgorithm and getAlgorithmVersion 404; createJob 400, 404, 409, 413, 503; getJob 404, 503; ' +
        'cancelJob 404, 409, 503; listJobs 503; streamJobEvents 404, 503; getJobDeliveries 404, 503; getJobSummary 503',
    )
  })

  test('the request examples are what "Try it out" sends, and they succeed', async () => {
    for (const { path, method, operation } of operations(document)) {
      const media = operation.requestBody?.content['application/json']
      // POST /jobs/{job_id}/cancel takes no body.
      if (method !== 'post' || operation.operationId === 'cancelJob') continue
      // One example, or the algorithm's named examples (a list in Swagger UI).
      const examples =
        media?.example === undefined
          ? Object.values(media?.examples ?? {}).map((named) => named.value)
          : [media.example]
      assert.ok(examples.length > 0, path)
      for (const example of examples) {
        const response = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(example),
        })
        assert.ok(response.ok, `${path}: ${response.status}`)
      }
    }
  })

  test('PrimeChecker alone: a job of an unknown algorithm passes the body schema and is answered 404', async () => {
    const validate = requestBodyValidator(document, '/jobs', 'post')
    const unknown = { algorithm: 'Sorter', params: { items: [3, 1, 2] } }
    assert.ok(validate(unknown), JSON.stringify(validate.errors))
    const response = await fetch(`${server.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(unknown),
    })
    assert.equal(response.status, 404)
    // PrimeChecker's own body is held to its branch, and what that refuses the service refuses too.
    assert.ok(validate({ algorithm: 'PrimeChecker', params: { number: '18446744073709551617' } }))
    const notAnObject = { algorithm: 'PrimeChecker', params: 97 }
    assert.equal(validate(notAnObject), false)
    const refused = await fetch(`${server.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(notAnObject),
    })
    assert.equal(refused.status, 422)
  })

  test('describes the webhook callback: payload, headers, signature and retries', () => {
    const callback = document.webhooks?.jobFinished?.post
    assert.ok(callback)
    assert.deepEqual(callback.requestBody?.content['application/json']?.schema, {
      $ref: '#/components/schemas/WebhookPayload',
    })
    assert.ok('WebhookPayload' in document.components.schemas)
    assert.deepEqual(
      callback.parameters?.map((p) => p.name),
      ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'user-agent'],
    )
    const description = (callback as { description?: string }).description ?? ''
    for (const phrase of ['1 s, 5 s and 15 s', '10 s', 'HMAC-SHA256', '410', 'Redirects']) {
      assert.ok(description.includes(phrase), phrase)
    }
  })
})

describe('the limits the OpenAPI document states are those the service applies', () => {
  let document: Document
  before(async () => {
    document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document
  })
  const example = (path: string, method: string, status: string) =>
    document.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.example

  test('the webhook retries: their number, their waits and the attempt time limit', () => {
    const callback = document.webhooks?.jobFinished?.post as unknown as {
      description: string
      responses: { default: { description: string } }
    }
    const waits = RETRY_WAITS_MS.map((ms) => `${ms / 1000} s`)
    const retries = `at most ${waits.length} retries after waits of ${waits.slice(0, -1).join(', ')} and ${waits.at(-1)}`
    assert.ok(callback.description.includes(retries), retries)
    assert.ok(callback.description.includes(`attempt times out after ${ATTEMPT_TIMEOUT_MS / 1000} s.`))
    assert.ok(callback.responses.default.description.includes(`none within ${ATTEMPT_TIMEOUT_MS / 1000} s`))
    // The delivery history's example: an attempt that timed out, and the retry after the first wait.
    const history = example('/jobs/{job_id}/deliveries', 'get', '200') as {
      attempts: { at: string; duration_ms: number; error: string | null; next_attempt_at: string | null }[]
    }
    const [timedOut] = history.attempts
    assert.equal(timedOut?.error, `no answer within ${ATTEMPT_TIMEOUT_MS} ms`)
    assert.ok((timedOut?.duration_ms ?? 0) >= ATTEMPT_TIMEOUT_MS)
    const waited =
      Date.parse(timedOut?.next_attempt_at ?? '') -
      Date.parse(timedOut?.at ?? '') -
      Math.round(timedOut?.duration_ms ?? 0)
    assert.equal(waited, RETRY_WAITS_MS[0])
  })

  test("the summary's latency buckets", () => {
    const summary = example('/job-summary', 'get', '200') as {
      latency_bounds_ms: number[]
      ended_per_minute: { latency_ms: { buckets: number[] } }[]
    }
    assert.deepEqual(summary.latency_bounds_ms, LATENCY_BOUNDS_MS)
    for (const minute of summary.ended_per_minute) {
      assert.equal(minute.latency_ms.buckets.length, LATENCY_BOUNDS_MS.length + 1)
    }
  })

  test('the body limit, as configured', async () => {
    const small = await startApp({ maxBodyBytes: 2048 })
    try {
      const own = (await (await fetch(`${small.url}/openapi.json`)).json()) as Document
      const limit = (path: string) =>
        JSON.stringify(own.paths[path]?.post?.responses['413']?.content?.['application/json']?.example)
      for (const path of ['/invoke', '/jobs']) {
        assert.match(limit(path), /"The request body is larger than the limit of 2048 bytes\."/, path)
        assert.match(limit(path), /"limit_bytes":2048/, path)
      }
    } finally {
      await small.close()
    }
  })
})

/** Every asset a page names: all must be on this server, and all must answer 200. */
async function assertAssetsLocal(page: string) {
  const response = await fetch(`${server.url}${page}`)
  assert.equal(response.status, 200)
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/)
  const html = await response.text()
  const assets = [...html.matchAll(/(?:src|href|spec-url)="([^"]+)"/g)].map((m) => m[1] as string)
  assert.ok(assets.length > 0, `${page} names its assets`)
  for (const asset of assets) {
    const target = new URL(asset, `${server.url}${page}`)
    assert.equal(target.origin, server.url, `${page} loads ${asset} from elsewhere`)
    const fetched = await fetch(target)
    assert.equal(fetched.status, 200, `${page}: ${asset}`)
    await fetched.arrayBuffer()
  }
  return html
}

describe('documentation pages', () => {
  test('GET /docs is Swagger UI with every asset served here', async () => {
    const html = await assertAssetsLocal('/docs')
    // A plain-HTTP host name other than localhost must not be sent to https for its assets.
    const csp = (await fetch(`${server.url}/docs`)).headers.get('content-security-policy') ?? ''
    assert.match(csp, /default-src 'self'/)
    assert.doesNotMatch(csp, /upgrade-insecure-requests/)
    assert.match(html, /swagger-ui/)
    const spec = await fetch(`${server.url}/docs/json`)
    assert.equal(spec.status, 200)
  })

  test('GET /redoc is ReDoc with every asset served here', async () => {
    const html = await assertAssetsLocal('/redoc')
    assert.match(html, /<redoc spec-url="\/openapi.json">/)
  })
})

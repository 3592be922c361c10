// Every route declares what it is (src/http/route-declaration.ts), and that declaration alone decides
// how the route is treated: a route that declares nothing cannot be registered, and with API keys,
// rate limits and CORS all on, each route (the plugins' too) is guarded as its kind says and answers
// errors in its declared shape.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { buildApp } from '../../src/app.js'
import { startApp, type TestApp } from '../helpers/app.js'

const KEY = 'ak_route_declarations_7'
const ORIGIN = 'https://app.example.com'

let server: TestApp
before(async () => {
  server = await startApp({
    apiKeys: [createHash('sha256').update(KEY).digest('hex')],
    rateLimit: 1000,
    rateLimitWindowMs: 60_000,
    corsOrigins: [ORIGIN],
  })
})
after(() => server.close())

describe('a route must declare what it is', () => {
  const handler = async () => 'never served'

  test('one that declares no kind, or an API route with no error shape, cannot be registered', async () => {
    const { service, config } = server
    const app = await buildApp(config, {
      executor: service.executor,
      algorithms: service.algorithms,
      metrics: service.metrics,
      backend: service.backend,
      isShuttingDown: () => false,
    })
    try {
      assert.throws(() => app.get('/undeclared', handler), /GET \/undeclared declares no kind/)
      assert.throws(
        () => app.post('/half-declared', { config: { kind: 'api' } }, handler),
        /POST \/half-declared is an API route and declares no errorShape/,
      )
      // Nor in a plugin of its own.
      await assert.rejects(async () => {
        await app.register(async (plugin) => {
          plugin.get('/in-a-plugin', handler)
        })
      }, /GET \/in-a-plugin declares no kind/)
      app.get('/declared', { config: { kind: 'health' } }, handler)
    } finally {
      await app.close()
    }
  })
})

/** Each route of the app, as a request, and what it is. */
const ROUTES: { method: string; path: string; kind: string; wrapped?: boolean }[] = [
  { method: 'POST', path: '/invoke', kind: 'api', wrapped: false },
  { method: 'POST', path: '/jobs', kind: 'api', wrapped: true },
  { method: 'GET', path: '/jobs', kind: 'api', wrapped: true },
  { method: 'GET', path: '/jobs/0123456789ab', kind: 'api', wrapped: true },
  { method: 'HEAD', path: '/jobs/0123456789ab', kind: 'api', wrapped: true },
  { method: 'POST', path: '/jobs/0123456789ab/cancel', kind: 'api', wrapped: true },
  { method: 'GET', path: '/jobs/0123456789ab/deliveries', kind: 'api', wrapped: true },
  { method: 'GET', path: '/job-summary', kind: 'api', wrapped: true },
  { method: 'GET', path: '/healthz', kind: 'health' },
  { method: 'HEAD', path: '/healthz', kind: 'health' },
  { method: 'GET', path: '/readyz', kind: 'health' },
  { method: 'GET', path: '/metrics', kind: 'metrics' },
  { method: 'GET', path: '/openapi.json', kind: 'docs' },
  { method: 'GET', path: '/redoc', kind: 'docs' },
  { method: 'GET', path: '/redoc/redoc.standalone.js', kind: 'docs' },
  // Swagger UI's routes, registered by its plugin.
  { method: 'GET', path: '/docs', kind: 'docs' },
  { method: 'GET', path: '/docs/json', kind: 'docs' },
  { method: 'GET', path: '/docs/yaml', kind: 'docs' },
  { method: 'GET', path: '/docs/static/index.html', kind: 'docs' },
  { method: 'GET', path: '/docs/static/swagger-ui.css', kind: 'docs' },
  { method: 'GET', path: '/docs/static/theme/favicon.svg', kind: 'docs' },
  { method: 'GET', path: '/dashboard', kind: 'dashboard' },
  { method: 'GET', path: '/dashboard/dashboard.css', kind: 'dashboard' },
  { method: 'GET', path: '/dashboard/dashboard.js', kind: 'dashboard' },
  { method: 'GET', path: '/dashboard/lossless-json.js', kind: 'dashboard' },
  { method: 'GET', path: '/dashboard/favicon.svg', kind: 'dashboard' },
]

const send = (method: string, path: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { ...headers, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    body:
      method !== 'POST'
        ? undefined
        : path === '/invoke'
          ? '{"number": 7}'
          : '{"algorithm": "PrimeChecker", "params": {"number": 7}}',
  })

describe('with API keys, rate limits and CORS on, each route is treated as it declares', () => {
  test('the API needs a key and answers its 401 in its error shape; the other kinds are open', async () => {
    for (const { method, path, kind, wrapped } of ROUTES) {
      const name = `${method} ${path}`
      const response = await send(method, path)
      if (kind !== 'api') {
        assert.equal(response.status, 200, name)
        await response.arrayBuffer()
        continue
      }
      assert.equal(response.status, 401, name)
      assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="algoserve"', name)
      if (method === 'HEAD') continue
      const body = (await response.json()) as { error?: string; detail?: { error?: string } }
      assert.equal(wrapped ? body.detail?.error : body.error, 'UNAUTHORIZED', name)
    }
  })

  test('the API alone is rate-limited: the other kinds have no limiter at all', async () => {
    for (const { method, path, kind } of ROUTES) {
      const response = await send(method, path, { authorization: `Bearer ${KEY}` })
      assert.ok(response.status < 500 && response.status !== 401, `${method} ${path}: ${response.status}`)
      await response.arrayBuffer()
      // The limiter tells every request it counts how many it allows.
      const limit = response.headers.get('x-ratelimit-limit')
      assert.equal(limit, kind === 'api' ? '1000' : null, `${method} ${path}`)
    }
  })

  test('a preflight (the CORS plugin route) needs no key and is not limited', async () => {
    const response = await send('OPTIONS', '/jobs', {
      origin: ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    })
    assert.equal(response.status, 204)
    assert.equal(response.headers.get('access-control-allow-origin'), ORIGIN)
    assert.equal(response.headers.get('x-ratelimit-limit'), null)
  })
})

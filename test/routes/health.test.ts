import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { buildApp } from '../../src/app.js'
import { startApp, type TestApp } from '../helpers/app.js'

let server: TestApp
before(async () => {
  server = await startApp()
})
after(() => server.close())

test('GET /healthz answers healthy with a unix timestamp in seconds', async () => {
  const before = Date.now() / 1000
  const response = await fetch(`${server.url}/healthz`)
  assert.equal(response.status, 200)
  const body = (await response.json()) as { status: string; timestamp: number }
  assert.deepEqual(Object.keys(body).sort(), ['status', 'timestamp'])
  assert.equal(body.status, 'healthy')
  assert.ok(body.timestamp >= before - 1 && body.timestamp <= Date.now() / 1000 + 1)
})

test('GET /readyz is ready with its algorithm and store checks', async () => {
  const response = await fetch(`${server.url}/readyz`)
  assert.equal(response.status, 200)
  const body = (await response.json()) as Record<string, unknown>
  assert.equal(body.status, 'ready')
  assert.equal(typeof body.timestamp, 'number')
  assert.deepEqual(body.checks, { algorithm: true, store: true })
})

test('GET /readyz is 503 not_ready from the start of a shutdown', async () => {
  // The app reads "shutting down" from its dependencies; this one is switched by the test.
  let shuttingDown = false
  const { service, config } = server
  const app = await buildApp(config, {
    executor: service.executor,
    algorithms: service.algorithms,
    metrics: service.metrics,
    backend: service.backend,
    isShuttingDown: () => shuttingDown,
  })
  try {
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as { port: number }
    shuttingDown = true
    const response = await fetch(`http://127.0.0.1:${port}/readyz`)
    assert.equal(response.status, 503)
    const body = (await response.json()) as Record<string, unknown>
    assert.equal(body.status, 'not_ready')
    assert.deepEqual(body.checks, { algorithm: true, store: true })
    assert.equal(response.headers.get('connection'), 'close', 'clients are told to reconnect elsewhere')
    const health = await fetch(`http://127.0.0.1:${port}/healthz`)
    assert.equal(health.status, 200, 'liveness does not change during a shutdown')
  } finally {
    await app.close()
  }
})

test('GET /readyz is 503 with a false check once the worker pool or the store is gone', async () => {
  const other = await startApp()
  try {
    await other.service.executor.close()
    let response = await fetch(`${other.url}/readyz`)
    assert.equal(response.status, 503)
    let body = (await response.json()) as Record<string, unknown>
    assert.equal(body.status, 'not_ready')
    assert.deepEqual(body.checks, { algorithm: false, store: true })
    await other.service.backend.close()
    response = await fetch(`${other.url}/readyz`)
    body = (await response.json()) as Record<string, unknown>
    assert.equal(response.status, 503)
    assert.deepEqual(body.checks, { algorithm: false, store: false })
  } finally {
    await other.close()
  }
})

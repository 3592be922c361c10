import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
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

test('GET /readyz is ready with its algorithm check', async () => {
  const response = await fetch(`${server.url}/readyz`)
  assert.equal(response.status, 200)
  const body = (await response.json()) as Record<string, unknown>
  assert.equal(body.status, 'ready')
  assert.equal(typeof body.timestamp, 'number')
  assert.deepEqual(body.checks, { algorithm: true })
})

test('GET /readyz is 503 not_ready from the start of a shutdown', async () => {
  server.setShuttingDown(true)
  try {
    const response = await fetch(`${server.url}/readyz`)
    assert.equal(response.status, 503)
    const body = (await response.json()) as Record<string, unknown>
    assert.equal(body.status, 'not_ready')
    assert.deepEqual(body.checks, { algorithm: true })
    assert.equal(response.headers.get('connection'), 'close', 'clients are told to reconnect elsewhere')
    const health = await fetch(`${server.url}/healthz`)
    assert.equal(health.status, 200, 'liveness does not change during a shutdown')
  } finally {
    server.setShuttingDown(false)
  }
})

test('GET /readyz is 503 with algorithm false once the worker pool is gone', async () => {
  const other = await startApp()
  try {
    await other.executor.close()
    const response = await fetch(`${other.url}/readyz`)
    assert.equal(response.status, 503)
    const body = (await response.json()) as Record<string, unknown>
    assert.equal(body.status, 'not_ready')
    assert.deepEqual(body.checks, { algorithm: false })
  } finally {
    await other.app.close()
  }
})

// Opt-in CORS against the real service: off by default; with origins set, preflights are answered and
// the allowed origin may read the answer and its request id.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startApp } from '../helpers/app.js'

const APP = 'https://app.example.com'

const preflight = (url: string, origin: string) =>
  fetch(`${url}/invoke`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, authorization, x-request-id',
    },
  })

test('off by default: no CORS headers, and OPTIONS is not an allowed method', async () => {
  const server = await startApp()
  try {
    const response = await preflight(server.url, APP)
    assert.equal(response.status, 405)
    assert.equal(response.headers.get('access-control-allow-origin'), null)
    const get = await fetch(`${server.url}/healthz`, { headers: { origin: APP } })
    assert.equal(get.headers.get('access-control-allow-origin'), null)
  } finally {
    await server.close()
  }
})

test('with origins set, preflights are answered for them and not for others', async () => {
  const server = await startApp({ corsOrigins: [APP], apiKeys: ['a'.repeat(64)] })
  try {
    const allowed = await preflight(server.url, APP)
    assert.equal(allowed.status, 204, 'a preflight needs no key')
    assert.equal(allowed.headers.get('access-control-allow-origin'), APP)
    assert.match(allowed.headers.get('access-control-allow-methods') ?? '', /POST/)
    assert.match(allowed.headers.get('access-control-allow-headers') ?? '', /authorization/)
    assert.match(allowed.headers.get('access-control-allow-headers') ?? '', /x-request-id/)

    const other = await preflight(server.url, 'https://evil.example.net')
    assert.equal(other.headers.get('access-control-allow-origin'), null)

    const answer = await fetch(`${server.url}/invoke`, {
      method: 'POST',
      headers: { origin: APP, 'content-type': 'application/json' },
      body: '{"number": 97}',
    })
    assert.equal(answer.status, 401)
    assert.equal(answer.headers.get('access-control-allow-origin'), APP, 'a refusal is readable too')
    assert.match(answer.headers.get('access-control-expose-headers') ?? '', /x-request-id/)
    assert.match(answer.headers.get('access-control-expose-headers') ?? '', /www-authenticate/)
  } finally {
    await server.close()
  }
})

test('* allows any origin', async () => {
  const server = await startApp({ corsOrigins: ['*'] })
  try {
    const response = await preflight(server.url, 'https://anywhere.example.org')
    assert.equal(response.status, 204)
    assert.equal(response.headers.get('access-control-allow-origin'), '*')
  } finally {
    await server.close()
  }
})

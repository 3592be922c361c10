// Opt-in API keys against the real service: off by default; when set, the API needs a key, answered
// 401 with WWW-Authenticate in each path's error shape; /healthz and /readyz stay open; /metrics and
// the documentation follow their settings; the OpenAPI document declares security only then.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { invoke97 } from '../helpers/app.js'
import { type ServedApp, serveApp } from '../helpers/served.js'

const KEY = 'ak_live_5f0c3b9e2d71'
const FILE_KEY = 'ak_from_the_file_8812'
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

test('by default no endpoint asks for a key, and the document declares no security', async () => {
  const server = await serveApp()
  try {
    assert.equal((await invoke97(server.url)).status, 200)
    assert.equal((await fetch(`${server.url}/metrics`)).status, 200)
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Record<string, unknown>
    assert.ok(!JSON.stringify(document).includes('"security"'))
  } finally {
    await server.close()
  }
})

describe('with API keys set', () => {
  let server: ServedApp
  let dir: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'algoserve-keys-'))
    const file = join(dir, 'keys')
    writeFileSync(file, `# deploy key\nsha256:${sha256(FILE_KEY)}\n`)
    server = await serveApp({ apiKeys: [sha256(KEY)], apiKeysFile: file })
  })
  after(async () => {
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('the API answers a key from the setting or the file', async () => {
    assert.equal((await invoke97(server.url, { authorization: `Bearer ${KEY}` })).status, 200)
    assert.equal((await invoke97(server.url, { authorization: `bearer  ${FILE_KEY}` })).status, 200)
    const job = await fetch(`${server.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: '{"algorithm": "PrimeChecker", "params": {"number": 7}}',
    })
    assert.equal(job.status, 202)
    const { job_id } = (await job.json()) as { job_id: string }
    const read = await fetch(`${server.url}/jobs/${job_id}`, { headers: { authorization: `Bearer ${KEY}` } })
    assert.equal(read.status, 200)
  })

  test('/invoke without a key or with a wrong one: 401, flat, with WWW-Authenticate', async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, 'Bearer realm="algoserve"'],
      [{ authorization: `Bearer ${KEY}0` }, 'Bearer realm="algoserve", error="invalid_token"'],
      [
        { authorization: `Basic ${Buffer.from(`u:${KEY}`).toString('base64')}` },
        'Bearer realm="algoserve", error="invalid_token"',
      ],
      [{ authorization: KEY }, 'Bearer realm="algoserve", error="invalid_token"'],
    ]
    for (const [headers, challenge] of cases) {
      const response = await invoke97(server.url, { ...headers, 'x-request-id': 'auth-test-1' })
      assert.equal(response.status, 401, JSON.stringify(headers))
      assert.equal(response.headers.get('www-authenticate'), challenge)
      const body = (await response.json()) as Record<string, unknown>
      assert.deepEqual(Object.keys(body).sort(), ['details', 'error', 'message', 'request_id'])
      assert.equal(body.error, 'UNAUTHORIZED')
      assert.equal(body.request_id, 'auth-test-1')
      assert.ok(!JSON.stringify(body).includes(KEY))
    }
  })

  test('/jobs, /jobs/{job_id} and /job-summary: 401 wrapped under detail', async () => {
    for (const [method, path] of [
      ['POST', '/jobs'],
      ['GET', '/jobs/0123456789ab'],
      ['GET', '/job-summary'],
    ] as const) {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'POST' ? '{"algorithm": "PrimeChecker", "params": {"number": 7}}' : undefined,
      })
      assert.equal(response.status, 401, path)
      assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="algoserve"')
      const body = (await response.json()) as { detail: { error: string } }
      assert.equal(body.detail.error, 'UNAUTHORIZED', path)
    }
  })

  test('/healthz, /readyz, /metrics and the documentation stay open (their settings are off)', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs', '/redoc']) {
      assert.equal((await fetch(`${server.url}${path}`)).status, 200, path)
    }
  })

  test('unknown paths are still 404 and wrong methods 405', async () => {
    assert.equal((await fetch(`${server.url}/nowhere`)).status, 404)
    assert.equal((await fetch(`${server.url}/invoke`)).status, 405)
  })

  test('the document declares the bearer scheme and requires it on the API only', async () => {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      components: { securitySchemes: Record<string, { scheme: string }> }
      paths: Record<string, Record<string, { security: unknown; responses: Record<string, unknown> }>>
    }
    assert.equal(document.components.securitySchemes.bearerAuth?.scheme, 'bearer')
    for (const [path, item] of Object.entries(document.paths)) {
      for (const operation of Object.values(item)) {
        const needsKey =
          path === '/invoke' ||
          path.startsWith('/jobs') ||
          path === '/job-summary' ||
          path.startsWith('/algorithms')
        assert.deepEqual(operation.security, needsKey ? [{ bearerAuth: [] }] : [], path)
        assert.equal('401' in operation.responses, needsKey, path)
        // Documented in the shape the route answers in: wrapped under `detail` on the job routes and
        // the algorithm listings, flat on the calls.
        const wrapped = !path.endsWith('/invoke')
        if (needsKey) {
          const schema = JSON.stringify(operation.responses['401'])
          assert.match(schema, wrapped ? /WrappedErrorResponse/ : /schemas\/ErrorResponse"/, path)
        }
      }
    }
  })
})

test('/metrics and the documentation need a key when their settings say so', async () => {
  const server = await serveApp({ apiKeys: [sha256(KEY)], apiKeysForMetrics: true, apiKeysForDocs: true })
  try {
    for (const path of ['/metrics', '/openapi.json', '/docs', '/docs/static/swagger-ui.css', '/redoc']) {
      const refused = await fetch(`${server.url}${path}`)
      assert.equal(refused.status, 401, path)
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="algoserve"')
      const allowed = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } })
      assert.equal(allowed.status, 200, path)
    }
    for (const path of ['/healthz', '/readyz'])
      assert.equal((await fetch(`${server.url}${path}`)).status, 200)
  } finally {
    await server.close()
  }
})

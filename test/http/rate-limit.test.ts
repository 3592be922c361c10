// Opt-in rate limits against the real service: off by default; when set, a client over the limit gets
// 429 RATE_LIMITED with Retry-After in its path's error shape, counted per API key when keys are on and
// per address otherwise; health, readiness and metrics are never limited.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import { invoke97, startApp } from '../helpers/app.js'
import { sleep } from '../helpers/time.js'

test('off by default: many requests, no 429', async () => {
  const server = await startApp()
  try {
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () => invoke97(server.url).then((r) => r.status)),
    )
    assert.deepEqual(new Set(statuses), new Set([200]))
  } finally {
    await server.close()
  }
})

test('over the limit: 429 with Retry-After, flat on /invoke, wrapped on /jobs; operations exempt', async () => {
  const server = await startApp({ rateLimit: 3, rateLimitWindowMs: 60_000 })
  try {
    for (let i = 0; i < 3; i++) assert.equal((await invoke97(server.url)).status, 200)
    const limited = await invoke97(server.url, { 'x-request-id': 'limited-1' })
    assert.equal(limited.status, 429)
    const retryAfter = Number(limited.headers.get('retry-after'))
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter))
    assert.deepEqual(await limited.json(), {
      error: 'RATE_LIMITED',
      message: 'Too many requests: at most 3 per 60 s; try again later.',
      details: { limit: 3, window_seconds: 60 },
      request_id: 'limited-1',
    })
    // The same client on /jobs: already over, and wrapped.
    const job = await fetch(`${server.url}/jobs/0123456789ab`)
    assert.equal(job.status, 429)
    assert.equal(((await job.json()) as { detail: { error: string } }).detail.error, 'RATE_LIMITED')
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      assert.equal((await fetch(`${server.url}${path}`)).status, 200, path)
    }
  } finally {
    await server.close()
  }
})

test('with API keys, each key is its own client', async () => {
  const keys = ['key-one-aaaaaaaa', 'key-two-bbbbbbbb']
  const hashes = keys.map((key) => createHash('sha256').update(key).digest('hex'))
  const server = await startApp({ apiKeys: hashes, rateLimit: 2, rateLimitWindowMs: 60_000 })
  try {
    const as = (key: string) => invoke97(server.url, { authorization: `Bearer ${key}` }).then((r) => r.status)
    assert.deepEqual(
      [await as('key-one-aaaaaaaa'), await as('key-one-aaaaaaaa'), await as('key-one-aaaaaaaa')],
      [200, 200, 429],
    )
    assert.deepEqual([await as('key-two-bbbbbbbb'), await as('key-two-bbbbbbbb')], [200, 200])
  } finally {
    await server.close()
  }
})

test('the window passes and the client may call again', async () => {
  const server = await startApp({ rateLimit: 1, rateLimitWindowMs: 1000 })
  try {
    assert.equal((await invoke97(server.url)).status, 200)
    const limited = await invoke97(server.url)
    assert.equal(limited.status, 429)
    assert.equal(limited.headers.get('retry-after'), '1')
    await sleep(1100)
    assert.equal((await invoke97(server.url)).status, 200)
  } finally {
    await server.close()
  }
})

test('behind a trusted proxy each X-Forwarded-For client is its own; otherwise they are one', async () => {
  for (const trustProxy of [true, false]) {
    const server = await startApp({ rateLimit: 1, rateLimitWindowMs: 60_000, trustProxy })
    try {
      const from = (address: string) =>
        invoke97(server.url, { 'x-forwarded-for': address }).then((r) => r.status)
      const statuses = [await from('203.0.113.7'), await from('198.51.100.9')]
      assert.deepEqual(statuses, trustProxy ? [200, 200] : [200, 429], `trustProxy ${trustProxy}`)
    } finally {
      await server.close()
    }
  }
})

test('the OpenAPI document gives the rate-limited operations, and only those, a 429 in their error shape', async () => {
  const server = await startApp({ rateLimit: 3, rateLimitWindowMs: 60_000 })
  try {
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
    }
    let limited = 0
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const isApi =
          path === '/invoke' ||
          path.startsWith('/jobs') ||
          path === '/job-summary' ||
          path.startsWith('/algorithms')
        const answer = JSON.stringify(operation.responses['429'] ?? null)
        assert.equal(answer !== 'null', isApi, `${method} ${path}`)
        if (!isApi) continue
        limited++
        assert.match(
          answer,
          /more than 3 requests from this client in 60 s.*at most 3 per 60 s/,
          `${method} ${path}`,
        )
        // Wrapped under `detail` on the job routes and the algorithm listings, flat on the calls.
        assert.match(
          answer,
          path.endsWith('/invoke') ? /schemas\/ErrorResponse"/ : /WrappedErrorResponse/,
          path,
        )
      }
    }
    assert.equal(
      limited,
      13,
      'invoke, createJob, getJob, listJobs, cancelJob, getJobDeliveries, streamJobEvents, getJobSummary, listAlgorithms, getAlgorithm, getAlgorithmVersion, invoke_PrimeChecker and its one version',
    )
  } finally {
    await server.close()
  }
})

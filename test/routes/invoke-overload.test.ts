// POST /invoke waits for a worker thread only so long; then 503 SERVICE_UNAVAILABLE
// in the flat shape with Retry-After, and /healthz keeps answering.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'
import { RSA_100 } from '../helpers/numbers.js'

const BUDGET_MS = 1000
const QUEUE_MS = 300

let server: TestApp
before(async () => {
  server = await startApp({
    workerThreads: 1,
    invokeFactorBudgetMs: BUDGET_MS,
    invokeQueueTimeoutMs: QUEUE_MS,
  })
})
after(() => server.close())

test('past the bound, 503 with Retry-After; every client answered within budget plus bound', async () => {
  const started = Date.now()
  const clients = Array.from({ length: 12 }, async () => {
    const response = await postRaw(`${server.url}/invoke`, `{"number": ${RSA_100}}`)
    return { ...response, afterMs: Date.now() - started }
  })
  const health: number[] = []
  const probing = (async () => {
    while (Date.now() - started < BUDGET_MS) {
      const t = performance.now()
      await fetch(`${server.url}/healthz`)
      health.push(performance.now() - t)
    }
  })()
  const answers = await Promise.all(clients)
  await probing
  const statuses = answers.map((a) => a.status)
  assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses}`)
  assert.equal(statuses.filter((s) => s === 503).length, 11, `statuses: ${statuses}`)
  for (const answer of answers.filter((a) => a.status === 503)) {
    assert.deepEqual(Object.keys(answer.json as object).sort(), ['details', 'error', 'message', 'request_id'])
    assert.equal((answer.json as { error: string }).error, 'SERVICE_UNAVAILABLE')
    assert.equal(answer.headers.get('retry-after'), '1')
    assert.ok(answer.afterMs < QUEUE_MS + 1500, `a 503 came after ${answer.afterMs} ms`)
  }
  const slowest = Math.max(...answers.map((a) => a.afterMs))
  assert.ok(slowest < BUDGET_MS + QUEUE_MS + 3000, `the last answer came after ${slowest} ms`)
  assert.ok(health.length > 0)
  // No run took place for a 503: it is not an algorithm error.
  const metrics = await server.service.metrics.registry.getSingleMetricAsString('algorithm_executions_total')
  assert.doesNotMatch(metrics, /status="error"\} [1-9]/)
})

test('the 503 is in the OpenAPI document of /invoke', async () => {
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<string, { post: { responses: Record<string, unknown> } }>
  }
  assert.ok(document.paths['/invoke']?.post.responses['503'])
})

test('below 2^64, what is cheap is answered on the event loop while every thread is busy', async () => {
  const busy = postRaw(`${server.url}/invoke`, `{"number": ${RSA_100}}`)
  await new Promise((resolve) => setTimeout(resolve, 100))
  // 2^64 - 59 is prime, and 2^64 - 1 splits by trial division but for 65537 * 6700417 (rho's work).
  const prime = await postRaw(`${server.url}/invoke`, '{"number": 18446744073709551557}')
  assert.equal(prime.status, 200, prime.text)
  assert.match(prime.text, /"is_prime":true/)
  const smallFactors = await postRaw(`${server.url}/invoke`, `{"number": ${65521n * 4294967291n}}`)
  assert.equal(smallFactors.status, 200, smallFactors.text)
  assert.match(smallFactors.text, /"factors":\[65521,4294967291\]/)
  const balanced = await postRaw(`${server.url}/invoke`, `{"number": ${4294967279n * 4294967291n}}`)
  assert.equal(balanced.status, 503, 'a balanced semiprime waits for a thread')
  assert.equal((await busy).status, 200)
})

// The job store's troubles, wherever a route meets them, become one answer: 503 SERVICE_UNAVAILABLE
// with Retry-After, wrapped under `detail` as every job route's errors are.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startApp } from '../helpers/app.js'
import { RSA_100 } from '../helpers/numbers.js'

const JOB = '0123456789ab'
const CREATE = JSON.stringify({ algorithm: 'PrimeChecker', params: { number: 97 } })

async function serviceUnavailable(response: Response, message: string, name: string) {
  assert.equal(response.status, 503, name)
  assert.match(response.headers.get('retry-after') ?? '', /^\d+$/, name)
  const body = (await response.json()) as { detail: Record<string, unknown> }
  assert.equal(body.detail.error, 'SERVICE_UNAVAILABLE', name)
  assert.equal(body.detail.message, message, name)
}

test('a store that fails: every job route answers 503, the store is unavailable, its cause in the log', async () => {
  const lines: Array<{ msg: string; request_id?: string; level: number; err?: { message?: string } }> = []
  const server = await startApp(
    { logLevel: 'info' },
    { logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line)) } } },
  )
  try {
    await server.service.backend.close()
    const requests: [string, string, string?][] = [
      ['POST', '/jobs', CREATE],
      ['GET', `/jobs/${JOB}`],
      ['GET', `/jobs/${JOB}?wait=1`],
      ['GET', '/jobs'],
      ['POST', `/jobs/${JOB}/cancel`],
      ['GET', `/jobs/${JOB}/deliveries`],
      ['GET', '/job-summary'],
    ]
    for (const [method, path, body] of requests) {
      const response = await fetch(`${server.url}${path}`, {
        method,
        body,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      })
      await serviceUnavailable(
        response,
        'The job store is unavailable; try again later.',
        `${method} ${path}`,
      )
      // The operator reads why, at warn; the client does not.
      const id = response.headers.get('x-request-id')
      const told = lines.find((line) => line.request_id === id && line.msg === 'the job store failed')
      assert.equal(
        told?.level,
        40,
        `${method} ${path}: ${JSON.stringify(lines.filter((l) => l.request_id === id))}`,
      )
      // better-sqlite3's words, or node:sqlite's (Node 24 on) for a statement of a closed database.
      assert.match(told?.err?.message ?? '', /not open|statement has been finalized/, `${method} ${path}`)
    }
  } finally {
    await server.close()
  }
})

test('a store that holds the most jobs allowed: POST /jobs answers 503, too many jobs are waiting', async () => {
  // One job at a time, busy for a minute, and at most one job waiting behind it.
  const server = await startApp({
    maxPendingJobs: 1,
    workerThreads: 1,
    jobConcurrency: 1,
    jobFactorBudgetMs: 60_000,
  })
  try {
    let refused: Response | undefined
    for (let i = 0; i < 5 && refused === undefined; i++) {
      const response = await fetch(`${server.url}/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ algorithm: 'PrimeChecker', params: { number: RSA_100 } }),
      })
      if (response.status === 202) await response.arrayBuffer()
      else refused = response
    }
    assert.ok(refused !== undefined, 'a POST was refused')
    await serviceUnavailable(refused, 'Too many jobs are waiting; try again later.', 'POST /jobs')
  } finally {
    await server.close()
  }
})

// A module whose result cannot reach a client (it holds a function or a symbol, refers to itself, or is
// longer than its maxResultBytes) fails that call once, at once, with a message saying why, through
// /invoke and through a job; its thread is free afterwards, and the run was not started again.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { startApp, type TestApp } from '../helpers/app.js'
import { invoke as invokeAlgorithm } from '../helpers/misbehaviour.js'

const FIXTURES = join(import.meta.dirname, '../fixtures/misbehaving')
const MODULES = ['returns-function', 'returns-symbol', 'returns-cycle', 'returns-too-much', 'counts-runs']
/** A bound on a hang, not a timing: each of these calls takes milliseconds. */
const HANG_MS = 10_000

let server: TestApp
before(async () => {
  // One thread: every run below meets the same one, and its counts are one thread's.
  server = await startApp({
    algorithms: [...MODULES.map((name) => join(FIXTURES, `${name}.mjs`)), 'examples/algorithms/collatz.mjs'],
    workerThreads: 1,
  })
})
after(() => server.close())

const invoke = (name: string, params: unknown) => invokeAlgorithm(server.url, name, params, HANG_MS)

const CASES: [name: string, why: RegExp][] = [
  ['ReturnsFunction', /cannot be copied out of its thread \(a function or a symbol\)$/],
  ['ReturnsSymbol', /cannot be copied out of its thread \(a function or a symbol\)$/],
  ['ReturnsCycle', /it refers to itself or is nested too deeply$/],
  ['ReturnsTooMuch', /it is 2\d{3} bytes of JSON, more than its limit of 1000 bytes$/],
]

test('each call fails once with 500 ALGORITHM_ERROR saying its result could not be sent back', async () => {
  for (const [name, why] of CASES) {
    const { status, body } = await invoke(name, {})
    assert.equal(status, 500, name)
    assert.equal(body.error, 'ALGORITHM_ERROR')
    const message = body.message as string
    const start = `The algorithm '${name}' failed while running: its result could not be sent back: `
    assert.ok(message.startsWith(start), message)
    assert.match(message, why)
    // The thread is free: a good call right after succeeds.
    const good = await invoke('Collatz', { n: 27 })
    assert.equal(good.status, 200)
  }
  const counted = await invoke('CountsRuns', {})
  assert.deepEqual(counted.body.result, {
    ReturnsFunction: 1,
    ReturnsSymbol: 1,
    ReturnsCycle: 1,
    ReturnsTooMuch: 1,
  })
  const metrics = await (await fetch(`${server.url}/metrics`)).text()
  for (const [name] of CASES)
    assert.match(
      metrics,
      new RegExp(`algorithm_executions_total\\{algorithm="${name}",status="error"\\} 1\\n`),
    )
})

test('a job of such a module fails once, with the same reason, and is not left running', async () => {
  const created = await fetch(`${server.url}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ algorithm: 'ReturnsSymbol', params: {} }),
  })
  assert.equal(created.status, 202)
  const { job_id } = (await created.json()) as { job_id: string }
  const read = await fetch(`${server.url}/jobs/${job_id}?wait=10`, { signal: AbortSignal.timeout(HANG_MS) })
  const job = (await read.json()) as { status: string; error: string }
  assert.equal(job.status, 'failed')
  assert.match(job.error, /its result could not be sent back: it holds a value that cannot be copied/)
  const counted = await invoke('CountsRuns', {})
  assert.equal((counted.body.result as Record<string, number>).ReturnsSymbol, 2)
})

// The 500 bodies of /invoke, with an algorithm that fails on purpose standing in for PrimeChecker.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Algorithm } from '../../src/algorithms/algorithm.js'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'

const SECRET = 'internal detail that must not leak'

const failing: Algorithm<{ n: number }, unknown> = {
  name: 'PrimeChecker',
  version: '9.9.9',
  parseParams(raw) {
    if (String(raw.number) === '13') throw new Error(SECRET)
    return { n: Number(raw.number) }
  },
  isCheap: () => true,
  run() {
    throw new TypeError(SECRET)
  },
}

let server: TestApp
before(async () => {
  server = await startApp({}, { algorithms: new Map([['PrimeChecker', failing as Algorithm]]) })
})
after(() => server.close())

test('a failing algorithm is 500 ALGORITHM_ERROR without its internals', async () => {
  const response = await postRaw(`${server.url}/invoke`, '{"number": 7}')
  assert.equal(response.status, 500)
  assert.deepEqual(response.json, {
    error: 'ALGORITHM_ERROR',
    message: "The algorithm 'PrimeChecker' failed while running.",
    details: null,
    request_id: response.headers.get('x-request-id'),
  })
  assert.doesNotMatch(response.text, new RegExp(SECRET))
  const metrics = await server.service.metrics.registry.getSingleMetricAsString('algorithm_executions_total')
  assert.match(metrics, /algorithm_executions_total\{algorithm="PrimeChecker",status="error"\} 1/)
})

test('any other fault is 500 INTERNAL_ERROR without its internals', async () => {
  const response = await postRaw(`${server.url}/invoke`, '{"number": 13}')
  assert.equal(response.status, 500)
  assert.deepEqual(response.json, {
    error: 'INTERNAL_ERROR',
    message: 'Internal server error.',
    details: null,
    request_id: response.headers.get('x-request-id'),
  })
  assert.doesNotMatch(response.text, /at |Error|internal detail/)
})

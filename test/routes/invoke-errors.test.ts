// The 500 bodies of algorithm calls: a module that throws is 500 ALGORITHM_ERROR with its own words
// and nothing of its internals (stack, file path); one whose result breaks its result schema too.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'

const modules = writeModules({
  'failing.mjs': moduleSource(validMembers('Failing', "() => { throw new TypeError('no sum today') }")),
  'wrong.mjs': moduleSource(validMembers('Wrong', "() => ({ sum: 'three' })")),
})

let server: TestApp
before(async () => {
  server = await startApp({ algorithms: [modules.dir] })
})
after(async () => {
  await server.close()
  modules.remove()
})

test('a failing algorithm is 500 ALGORITHM_ERROR with its own message, and nothing of its internals', async () => {
  const response = await postRaw(`${server.url}/algorithms/Failing/invoke`, '{"a": 1, "b": 2}')
  assert.equal(response.status, 500)
  assert.deepEqual(response.json, {
    error: 'ALGORITHM_ERROR',
    message: "The algorithm 'Failing' failed while running: no sum today",
    details: null,
    request_id: response.headers.get('x-request-id'),
  })
  assert.doesNotMatch(response.text, /failing\.mjs| at |TypeError/)
  const metrics = await server.service.metrics.registry.getSingleMetricAsString('algorithm_executions_total')
  assert.match(metrics, /algorithm_executions_total\{algorithm="Failing",status="error"\} 1/)
})

test('a result that breaks the result schema is 500 ALGORITHM_ERROR saying where', async () => {
  const response = await postRaw(`${server.url}/algorithms/Wrong/invoke`, '{"a": 1, "b": 2}')
  assert.equal(response.status, 500)
  const body = response.json as { error: string; message: string }
  assert.equal(body.error, 'ALGORITHM_ERROR')
  assert.equal(
    body.message,
    "The algorithm 'Wrong' failed while running: its result breaks its result schema: sum: must be integer",
  )
})

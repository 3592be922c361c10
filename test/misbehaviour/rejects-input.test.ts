// Algorithms that refuse their params (test/fixtures/misbehaving/rejects-input*), on each job backend: a
// module throwing an error named InvalidParamsError, a program answering an `invalid_params` error. A
// synchronous call is the caller's 400 VALIDATION_ERROR in the algorithm's words, a job fails with them,
// and the run counts as invalid_params; the algorithm's own failure stays a 500 ALGORITHM_ERROR.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { fixture, invoke } from '../helpers/misbehaviour.js'

const NEGATIVE = 'n must not be negative, got -3'
const WHOLE = 'these params go together in no way'

/** The value of algorithm_executions_total for this algorithm and status, 0 when absent. */
async function executions(url: string, algorithm: string, status: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`algorithm_executions_total{algorithm="${algorithm}",status="${status}"}`))
  return line === undefined ? 0 : Number(line.split(' ').at(-1))
}

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({
      algorithms: [fixture('rejects-input.mjs'), fixture('rejects-input-js')],
    })
  })
  after(() => server.close())

  for (const name of ['RejectsInput', 'RejectsInputJs']) {
    describe(name, () => {
      test('a refused field is a 400 VALIDATION_ERROR naming it and its value, in the algorithm words', async () => {
        const answer = await invoke(server.url, name, { n: -3 })
        assert.equal(answer.status, 400)
        const { request_id, ...rest } = answer.body as Record<string, unknown>
        assert.equal(typeof request_id, 'string')
        assert.deepEqual(rest, {
          error: 'VALIDATION_ERROR',
          message: NEGATIVE,
          details: { field: 'n', value: -3 },
        })
      })

      test('a refusal naming no field is a 400 with a null field and value', async () => {
        const answer = await invoke(server.url, name, { n: 1, mode: 'whole' })
        assert.equal(answer.status, 400)
        const { request_id: _, ...rest } = answer.body as Record<string, unknown>
        assert.deepEqual(rest, {
          error: 'VALIDATION_ERROR',
          message: WHOLE,
          details: { field: null, value: null },
        })
      })

      test("the algorithm's own failure is still a 500 ALGORITHM_ERROR, and a good call succeeds", async () => {
        const failed = await invoke(server.url, name, { n: 1, mode: 'fail' })
        assert.equal(failed.status, 500)
        assert.equal(failed.body.error, 'ALGORITHM_ERROR')
        assert.equal(
          failed.body.message,
          `The algorithm '${name}' failed while running: it failed on purpose`,
        )
        const good = await invoke(server.url, name, { n: 2 })
        assert.equal(good.status, 200)
        assert.deepEqual(good.body.result, { n: 2 })
      })

      test('a job it refuses fails with its message', async () => {
        const created = await createJob(server.url, { algorithm: name, params: { n: -3 } })
        assert.equal(created.status, 202)
        const job = await waitForJob(server.url, created.json.job_id as string)
        assert.equal(job.status, 'failed')
        assert.equal(job.error, NEGATIVE)
      })

      test('refusals count as invalid_params, failures as error', async () => {
        const before = {
          invalid: await executions(server.url, name, 'invalid_params'),
          error: await executions(server.url, name, 'error'),
        }
        assert.equal((await invoke(server.url, name, { n: -3 })).status, 400)
        assert.equal((await invoke(server.url, name, { n: -3 })).status, 400)
        assert.equal((await invoke(server.url, name, { n: 1, mode: 'fail' })).status, 500)
        assert.equal(await executions(server.url, name, 'invalid_params'), before.invalid + 2)
        assert.equal(await executions(server.url, name, 'error'), before.error + 1)
      })
    })
  }

  test('a refusal on a line long enough to be read on the output thread is the same 400', async () => {
    const answer = await invoke(server.url, 'RejectsInputJs', { n: -3, mode: 'long' })
    assert.equal(answer.status, 400)
    assert.equal(answer.body.error, 'VALIDATION_ERROR')
    assert.equal(answer.body.message, `${NEGATIVE}${' '.repeat(20_000)}`)
    assert.deepEqual((answer.body as Record<string, unknown>).details, { field: 'n', value: -3 })
  })

  test('an error object of another type breaks the protocol: a 500 in clear words', async () => {
    const answer = await invoke(server.url, 'RejectsInputJs', { n: 1, mode: 'odd-error' })
    assert.equal(answer.status, 500)
    assert.equal(answer.body.error, 'ALGORITHM_ERROR')
    assert.equal(
      answer.body.message,
      "The algorithm 'RejectsInputJs' failed while running: its process wrote an 'error' object whose " +
        "'type' is not 'invalid_params'",
    )
    // Its process was stopped for it; the next call gets a new one.
    assert.equal((await invoke(server.url, 'RejectsInputJs', { n: 2 })).status, 200)
  })
})

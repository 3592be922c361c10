// An Idempotency-Key on POST /jobs over real HTTP, on every job backend: a replay, racing requests
// with one key, a key reused for another request, and bad keys.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { forEachBackend } from '../../helpers/backends.js'
import { call, detailOf, jobControlService } from '../../helpers/job-control.js'
import { createJob } from '../../helpers/jobs.js'

forEachBackend((backend) => {
  const service = jobControlService(backend)

  describe('Idempotency-Key on POST /jobs', () => {
    const post = (key: string, body: Record<string, unknown>) =>
      call(`${service.url}/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      })
    const body = { algorithm: 'PrimeChecker', params: { number: 211 } }

    test('the same key and request answer with the same job, saying it is a replay', async () => {
      const key = `replay-${backend.name}-${Date.now()}`
      const first = await post(key, body)
      assert.equal(first.status, 202)
      assert.equal(first.headers.get('idempotent-replayed'), null)
      const again = await post(key, { ...body, params: { number: '211' } })
      assert.equal(again.status, 202)
      assert.equal(again.headers.get('idempotent-replayed'), 'true')
      assert.deepEqual(again.json, first.json)
      // Without the key, the same request is a new job.
      const fresh = await createJob(service.url, body)
      assert.notEqual(fresh.json.job_id, first.json.job_id)
    })

    test('racing requests with one key make one job', async () => {
      const key = `race-${backend.name}-${Date.now()}`
      const answers = await Promise.all(Array.from({ length: 10 }, () => post(key, body)))
      assert.ok(answers.every((a) => a.status === 202))
      assert.equal(new Set(answers.map((a) => a.json.job_id)).size, 1)
      assert.equal(answers.filter((a) => a.headers.get('idempotent-replayed') === null).length, 1)
      const job = await call(`${service.url}/jobs/${answers[0]?.json.job_id}`)
      assert.equal(job.status, 200)
    })

    test('409 IDEMPOTENCY_KEY_REUSED for another request; 422 for a bad key', async () => {
      const key = `reuse-${backend.name}-${Date.now()}`
      assert.equal((await post(key, body)).status, 202)
      const other = await post(key, { ...body, params: { number: 223 } })
      assert.equal(other.status, 409)
      assert.equal(detailOf(other).error, 'IDEMPOTENCY_KEY_REUSED')
      assert.equal(detailOf(other).request_id, other.headers.get('x-request-id'))
      for (const bad of ['', 'x'.repeat(256), 'tab\there']) {
        const answer = await post(bad, body)
        assert.equal(answer.status, 422, JSON.stringify(bad))
        const [problem] = answer.json.detail as Record<string, unknown>[]
        assert.deepEqual(problem?.loc, ['header', 'idempotency-key'])
      }
      assert.equal((await post('x'.repeat(255), body)).status, 202, '255 characters are fine')
    })
  })
})

// GET /jobs/{job_id}/deliveries over real HTTP, on every job backend: every attempt of a delivery that
// fails then succeeds, one retrying then given up, and a job without a webhook or unknown.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { forEachBackend } from '../../helpers/backends.js'
import { call, detailOf, jobControlService } from '../../helpers/job-control.js'
import { startReceiver } from '../../helpers/receiver.js'
import { until } from '../../helpers/time.js'

forEachBackend((backend) => {
  // Retried after 300 ms: the given-up delivery's four attempts within a test's time.
  const service = jobControlService(backend, { webhookRetryWaitsMs: [300, 300, 300] })
  const { quickJob } = service

  describe('GET /jobs/{job_id}/deliveries', () => {
    test('every attempt of a delivery that fails, then succeeds', async () => {
      const flaky = await startReceiver((n) => (n === 0 ? 500 : 204))
      try {
        const id = await quickJob(97, flaky.url)
        const history = await until(
          async () => {
            const answer = await call(`${service.url}/jobs/${id}/deliveries`)
            return answer.json.state === 'delivered' && answer
          },
          15_000,
          'the delivery was delivered',
        )
        assert.equal(history.status, 200)
        assert.equal(history.json.job_id, id)
        assert.equal(history.json.url, flaky.url)
        const attempts = history.json.attempts as Record<string, unknown>[]
        assert.equal(attempts.length, 2)
        const [failed, delivered] = attempts as [Record<string, unknown>, Record<string, unknown>]
        assert.equal(failed.attempt, 1)
        assert.equal(failed.status_code, 500)
        assert.equal(failed.error, 'the receiver answered 500')
        assert.equal(typeof failed.duration_ms, 'number')
        assert.ok(typeof failed.next_attempt_at === 'string')
        const wait = Date.parse(failed.next_attempt_at as string) - Date.parse(failed.at as string)
        assert.ok(wait >= 300 && wait < 2000, `next attempt ${wait} ms after the first`)
        assert.equal(delivered.attempt, 2)
        assert.equal(delivered.status_code, 204)
        assert.equal(delivered.error, null)
        assert.equal(delivered.next_attempt_at, null)
        assert.ok(Date.parse(delivered.at as string) >= Date.parse(failed.next_attempt_at as string) - 50)
      } finally {
        await flaky.close()
      }
    })

    test('retrying while attempts fail, failed once given up', async () => {
      const down = await startReceiver(() => 503)
      try {
        const id = await quickJob(97, down.url)
        const retrying = await until(
          async () => {
            const answer = await call(`${service.url}/jobs/${id}/deliveries`)
            return answer.json.state === 'retrying' && answer
          },
          10_000,
          'the delivery was retrying',
        )
        const last = (retrying.json.attempts as Record<string, unknown>[]).at(-1)
        assert.equal(last?.status_code, 503)
        assert.ok(typeof last?.next_attempt_at === 'string')
        const failed = await until(
          async () => {
            const answer = await call(`${service.url}/jobs/${id}/deliveries`)
            return answer.json.state === 'failed' && answer
          },
          15_000,
          'the delivery was given up',
        )
        const attempts = failed.json.attempts as Record<string, unknown>[]
        assert.equal(attempts.length, 4)
        assert.equal(attempts.at(-1)?.next_attempt_at, null)
      } finally {
        await down.close()
      }
    })

    test('state none without a webhook; 404 for an unknown job', async () => {
      const id = await quickJob(89)
      const answer = await call(`${service.url}/jobs/${id}/deliveries`)
      assert.deepEqual(answer.json, { job_id: id, url: null, state: 'none', attempts: [] })
      const missing = await call(`${service.url}/jobs/0123456789ab/deliveries`)
      assert.equal(missing.status, 404)
      assert.equal(detailOf(missing).error, 'JOB_NOT_FOUND')
    })
  })
})

// GET /jobs/{job_id}?wait= over real HTTP, on every job backend: the answer as soon as the job ends,
// at the end of the wait, 422 for a bad wait, and the bound on waits held, which a client going away
// releases.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { forEachBackend } from '../../helpers/backends.js'
import { call, jobControlService, MAX_WAITERS, samples } from '../../helpers/job-control.js'
import { waitForJob } from '../../helpers/jobs.js'
import { perProcessBound } from '../../helpers/served.js'
import { until } from '../../helpers/time.js'

forEachBackend((backend) => {
  const service = jobControlService(backend)
  const { slowJob, quickJob, cancel } = service

  describe('GET /jobs/{job_id}?wait=', () => {
    const get = (id: string, query: string, signal?: AbortSignal) =>
      call(`${service.url}/jobs/${id}${query}`, signal === undefined ? {} : { signal })
    /**
     * Until the service answers `count` requests besides the one asking. A wait is held just after its
     * request's first read of the job, which comes before the reads of any request sent later.
     */
    const untilInProgress = (count: number) =>
      until(
        async () => (await samples(service.url)).get('http_requests_in_progress') === count + 1,
        5000,
        `${count} requests in progress`,
      )

    test('answers as soon as the job ends', async () => {
      const slow = await slowJob()
      await waitForJob(service.url, slow, (job) => job.status === 'running')
      const started = Date.now()
      const waiting = get(slow, '?wait=20')
      await untilInProgress(1)
      await cancel(slow)
      const answer = await waiting
      const took = Date.now() - started
      assert.equal(answer.status, 200)
      assert.equal(answer.json.status, 'failed')
      assert.ok(took < 15_000, `the wait answered after ${took} ms, before its 20 s`)
      assert.equal(answer.headers.get('wait-skipped'), null)
      // A quick job: the wait answers with its end.
      const quick = await quickJob(1009)
      assert.equal((await get(quick, '?wait=10')).json.status, 'completed')
    })

    test('answers at the end of the wait with the current state; 422 for a bad wait', async () => {
      const slow = await slowJob()
      await waitForJob(service.url, slow, (job) => job.status === 'running')
      const started = Date.now()
      const answer = await get(slow, '?wait=0.6')
      const took = Date.now() - started
      assert.equal(answer.json.status, 'running')
      assert.ok(took >= 550, `answered after ${took} ms, before the wait ended`)
      await cancel(slow)
      for (const [wait, type] of [
        ['61', 'less_than_equal'],
        ['-1', 'greater_than_equal'],
        ['soon', 'float_parsing'],
      ]) {
        const bad = await get(slow, `?wait=${wait}`)
        assert.equal(bad.status, 422)
        const [problem] = bad.json.detail as Record<string, unknown>[]
        assert.deepEqual(problem?.loc, ['query', 'wait'])
        assert.equal(problem?.type, type)
      }
    })

    test(`at most ${MAX_WAITERS} waits are held; a client that goes away releases its wait`, {
      skip: perProcessBound,
    }, async () => {
      const slow = await slowJob()
      await waitForJob(service.url, slow, (job) => job.status === 'running')
      const clients = Array.from({ length: MAX_WAITERS }, () => new AbortController())
      const held = clients.map((client) => get(slow, '?wait=30', client.signal).catch((error) => error))
      await untilInProgress(MAX_WAITERS)
      const started = Date.now()
      const beyond = await get(slow, '?wait=30')
      assert.ok(Date.now() - started < 1000, 'a wait beyond the bound answers at once')
      assert.equal(beyond.headers.get('wait-skipped'), 'true')
      assert.equal(beyond.json.status, 'running')
      // The clients go away: their waits are released, and a new one is held again.
      for (const client of clients) client.abort()
      await Promise.all(held)
      await untilInProgress(0)
      const again = await get(slow, '?wait=0.3')
      assert.equal(again.headers.get('wait-skipped'), null)
      await cancel(slow)
    })
  })
})

// GET /jobs over real HTTP, on every job backend: newest first with a cursor that holds while jobs are
// created, filters, the default page, 422 for bad queries, and expired jobs left out.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { forEachBackend } from '../../helpers/backends.js'
import { call, jobControlService } from '../../helpers/job-control.js'
import { createJob, type JobBody, waitForJob } from '../../helpers/jobs.js'
import { inProcessOnly } from '../../helpers/served.js'
import { until } from '../../helpers/time.js'

forEachBackend((backend) => {
  const service = jobControlService(backend)
  const { slowJob, quickJob, cancel } = service

  describe('GET /jobs', () => {
    const list = (query: string) => call(`${service.url}/jobs${query}`)

    test('newest first; a cursor pages on while jobs are created, with no repeat and no gap', async () => {
      const ids: string[] = []
      for (let i = 0; i < 7; i++) ids.push(await quickJob(101 + i * 2))
      const first = await list('?limit=3')
      assert.equal(first.status, 200)
      const seen = (first.json.jobs as JobBody[]).map((job) => job.job_id)
      assert.deepEqual(seen, ids.slice(-3).reverse())
      // Jobs created now come before the cursor: they never show up on the next pages.
      const later = [await quickJob(211), await quickJob(223)]
      let cursor = first.json.next_cursor as string | null
      while (cursor !== null) {
        const page = await list(`?limit=3&cursor=${encodeURIComponent(cursor)}`)
        assert.equal(page.status, 200)
        const jobs = page.json.jobs as JobBody[]
        assert.ok(jobs.length <= 3)
        seen.push(...jobs.map((job) => job.job_id))
        cursor = page.json.next_cursor as string | null
      }
      assert.equal(new Set(seen).size, seen.length, 'no job twice')
      for (const id of later) assert.ok(!seen.includes(id), 'a job created after the first page')
      const ours = seen.filter((id) => ids.includes(id))
      assert.deepEqual(ours, [...ids].reverse(), 'every job of ours, newest first')
      // The whole listing is ordered by created_at, then job_id, descending.
      const all = await list('?limit=500')
      const jobs = all.json.jobs as JobBody[]
      for (let i = 1; i < jobs.length; i++) {
        const [a, b] = [jobs[i - 1] as JobBody, jobs[i] as JobBody]
        assert.ok(a.created_at > b.created_at || (a.created_at === b.created_at && a.job_id > b.job_id))
      }
      // Each job is exactly its GET /jobs/{job_id} body, with its progress (an ended job has none).
      const one = jobs.find((job) => job.job_id === ids[0])
      assert.deepEqual(one, { ...(await call(`${service.url}/jobs/${ids[0]}`)).json, progress: null })
    })

    test('filters by status and algorithm; default limit 50', async () => {
      const done = await quickJob(331)
      await waitForJob(service.url, done)
      const slow = await slowJob()
      await cancel(slow)
      const completed = await list('?status=completed&limit=500')
      const completedJobs = completed.json.jobs as JobBody[]
      assert.ok(completedJobs.length > 0)
      assert.ok(completedJobs.every((job) => job.status === 'completed'))
      assert.ok(completedJobs.some((job) => job.job_id === done))
      const failed = (await list('?status=failed&limit=500')).json.jobs as JobBody[]
      assert.ok(failed.every((job) => job.status === 'failed'))
      assert.ok(failed.some((job) => job.job_id === slow))
      assert.ok(!failed.some((job) => job.job_id === done))
      const byName = (await list('?algorithm=PrimeChecker&limit=500')).json.jobs as JobBody[]
      assert.ok(byName.length > 0 && byName.every((job) => job.algorithm === 'PrimeChecker'))
      const none = await list('?algorithm=primechecker')
      assert.deepEqual(none.json, { jobs: [], next_cursor: null })
      // More than 50 jobs exist by now: the default page is 50 and says where to go on.
      while (((await list('?limit=500')).json.jobs as JobBody[]).length <= 50) await quickJob(337)
      const page = await list('')
      assert.equal((page.json.jobs as JobBody[]).length, 50)
      assert.equal(typeof page.json.next_cursor, 'string')
    })

    test('422 in the pydantic shape for a bad status, limit or cursor', async () => {
      const cases: [string, string, string][] = [
        ['?status=done', 'status', 'enum'],
        ['?limit=0', 'limit', 'greater_than_equal'],
        ['?limit=501', 'limit', 'less_than_equal'],
        ['?limit=ten', 'limit', 'int_parsing'],
        ['?limit=2.5', 'limit', 'int_parsing'],
        ['?cursor=nonsense', 'cursor', 'value_error'],
        [`?cursor=${Buffer.from('12.zzzzzzzzzzzz').toString('base64url')}`, 'cursor', 'value_error'],
        ['?status=failed&status=completed', 'status', 'string_type'],
      ]
      for (const [query, name, type] of cases) {
        const answer = await list(query)
        assert.equal(answer.status, 422, query)
        const [problem] = answer.json.detail as Record<string, unknown>[]
        assert.deepEqual(problem?.loc, ['query', name], query)
        assert.equal(problem?.type, type, query)
        assert.equal(typeof problem?.msg, 'string')
      }
    })

    // A service of its own, for its TTL.
    test('expired jobs never appear', { skip: inProcessOnly }, async () => {
      const short = await backend.start({ jobTtlSeconds: 1 })
      try {
        const created = await createJob(short.url, { algorithm: 'PrimeChecker', params: { number: 7 } })
        const id = created.json.job_id as string
        await waitForJob(short.url, id)
        const listed = await call(`${short.url}/jobs`)
        assert.ok((listed.json.jobs as JobBody[]).some((job) => job.job_id === id))
        // Kept 1 s past its end, then gone.
        await until(
          async () => ((await call(`${short.url}/jobs`)).json.jobs as JobBody[]).length === 0,
          10_000,
          'the job expired',
        )
        for (const query of ['', '?status=completed']) {
          const after = await call(`${short.url}/jobs${query}`)
          assert.deepEqual(after.json, { jobs: [], next_cursor: null }, query)
        }
      } finally {
        await short.close()
      }
    })
  })
})

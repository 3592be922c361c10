// GET /job-summary over real HTTP, on every job backend, each test on a service of its own so that
// every job counted is known: counts and ends by minute against the jobs' own bodies, expiry and the
// sweep, BullMQ's data points (Redis), and an upgraded data directory (embedded).
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { MIGRATIONS } from '../../../src/jobs/embedded/migrations/index.js'
import { openConnection } from '../../../src/jobs/embedded/sqlite-driver.js'
import { DATABASE_FILE } from '../../../src/jobs/embedded/sqlite-store.js'
import { tempDataDir } from '../../helpers/app.js'
import { forEachBackend } from '../../helpers/backends.js'
import { call } from '../../helpers/job-control.js'
import { createJob, type JobBody, waitForJob } from '../../helpers/jobs.js'
import { RSA_100 } from '../../helpers/numbers.js'
import { PRIME_CHECKER_QUEUE, redisCommand } from '../../helpers/redis.js'
import { inProcessOnly } from '../../helpers/served.js'
import { until } from '../../helpers/time.js'

forEachBackend((backend) => {
  describe('GET /job-summary', () => {
    interface Minute {
      minute: string
      completed: number
      failed: number
      latency_ms: { buckets: number[]; sum: number }
    }
    interface Summary {
      counts: Record<string, number>
      latency_bounds_ms: number[]
      ended_per_minute: Minute[]
    }
    const summaryOf = async (url: string) => {
      const answer = await call(`${url}/job-summary`)
      assert.equal(answer.status, 200)
      assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8')
      return answer.json as unknown as Summary
    }
    const listed = async (url: string) => (await call(`${url}/jobs?limit=500`)).json.jobs as JobBody[]
    const bucketOf = (bounds: number[], ms: number) => {
      const i = bounds.findIndex((bound) => ms <= bound)
      return i === -1 ? bounds.length : i
    }
    /** What the summary must say of these jobs, from their bodies: counts, and ends by minute. */
    const expected = (summary: Summary, jobs: JobBody[]) => {
      const counts: Record<string, number> = { pending: 0, running: 0, completed: 0, failed: 0 }
      const minutes = new Map(
        summary.ended_per_minute.map((m) => [
          Date.parse(m.minute),
          {
            minute: m.minute,
            completed: 0,
            failed: 0,
            latency_ms: { buckets: summary.latency_bounds_ms.map(() => 0).concat(0), sum: 0 },
          },
        ]),
      )
      for (const job of jobs) {
        counts[job.status] = (counts[job.status] ?? 0) + 1
        if (job.completed_at === null) continue
        const end = Date.parse(job.completed_at)
        const minute = minutes.get(Math.floor(end / 60_000) * 60_000)
        if (minute === undefined) {
          const first = Date.parse(summary.ended_per_minute[0]?.minute ?? '')
          assert.ok(end < first, `the end of ${job.job_id} (${job.completed_at}) is in the summary's minutes`)
          continue
        }
        minute[job.status as 'completed' | 'failed']++
        const latency = end - Date.parse(job.created_at)
        ;(minute.latency_ms.buckets[bucketOf(summary.latency_bounds_ms, latency)] as number)++
        minute.latency_ms.sum += latency
      }
      return { counts, latency_bounds_ms: summary.latency_bounds_ms, ended_per_minute: [...minutes.values()] }
    }
    /**
     * The summary says of the service's jobs what their bodies say. Polled: on Redis a job's latency is
     * counted just after its end, not with it.
     */
    const matchesTheJobs = async (url: string) => {
      let last: unknown
      await until(
        async () => {
          const summary = await summaryOf(url)
          const want = expected(summary, await listed(url))
          last = { summary, want }
          return JSON.stringify(summary) === JSON.stringify(want)
        },
        10_000,
        () => `the summary matches the jobs: ${JSON.stringify(last)}`,
        50,
      )
      return (last as { summary: Summary }).summary
    }
    const ends = (summary: Summary, status: 'completed' | 'failed') =>
      summary.ended_per_minute.reduce((sum, m) => sum + m[status], 0)

    test('counts every job by state, and the ends and latencies of each of the last 15 minutes, as the jobs show them', {
      skip: inProcessOnly,
    }, async () => {
      // A service of its own, so that every job counted is known: one job at a time, so one slow job
      // runs and the next waits.
      const own = await backend.start({ jobFactorBudgetMs: 60_000, workerThreads: 1, jobConcurrency: 1 })
      const post = async (number: number | string) => {
        const created = await createJob(own.url, { algorithm: 'PrimeChecker', params: { number } })
        return created.json.job_id as string
      }
      const stop = (id: string) => call(`${own.url}/jobs/${id}/cancel`, { method: 'POST' })
      try {
        const empty = await summaryOf(own.url)
        assert.deepEqual(empty.counts, { pending: 0, running: 0, completed: 0, failed: 0 })
        assert.deepEqual(
          empty.latency_bounds_ms,
          [
            1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000,
            500_000,
          ],
        )
        const starts = empty.ended_per_minute.map((m) => Date.parse(m.minute))
        assert.equal(starts.length, 15)
        for (const [i, start] of starts.entries()) {
          assert.equal(start % 60_000, 0, 'a whole minute')
          if (i > 0) assert.equal(start - (starts[i - 1] as number), 60_000, 'one minute after another')
        }
        assert.ok(Date.now() - (starts.at(-1) as number) < 120_000, 'the last is the current minute')
        for (const m of empty.ended_per_minute) {
          assert.deepEqual([m.completed, m.failed, m.latency_ms.sum], [0, 0, 0])
          assert.deepEqual(m.latency_ms.buckets, Array(19).fill(0))
        }

        for (const number of [97, 91, 89]) await waitForJob(own.url, await post(number))
        const running = await post(RSA_100)
        await waitForJob(own.url, running, (job) => job.status === 'running')
        const waiting = await post(RSA_100)
        const cancelled = await post(RSA_100)
        assert.equal((await stop(cancelled)).status, 200)
        const during = await matchesTheJobs(own.url)
        assert.deepEqual(during.counts, { pending: 1, running: 1, completed: 3, failed: 1 })
        assert.equal(ends(during, 'completed'), 3)
        assert.equal(ends(during, 'failed'), 1)

        // A waiting job cancelled, and a running one (its run fails, as a run that fails does).
        for (const id of [waiting, running]) assert.equal((await stop(id)).status, 200)
        const after = await matchesTheJobs(own.url)
        assert.deepEqual(after.counts, { pending: 0, running: 0, completed: 3, failed: 3 })
        assert.equal(ends(after, 'failed'), 3)
      } finally {
        await own.close()
      }
    })

    test('a job past its retention is not counted, before and after the sweep; its end still is, in its minute', {
      skip: inProcessOnly,
    }, async () => {
      // A job that fails on the hard time limit, beside one that completes.
      const short = await backend.start({ jobTtlSeconds: 3, jobTimeoutMs: 300, jobFactorBudgetMs: 30_000 })
      // The sweep runs when the test says: first the expired jobs are still stored.
      short.service.sweeper.stop()
      try {
        const slow = await createJob(short.url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })
        const quick = await createJob(short.url, { algorithm: 'PrimeChecker', params: { number: 7 } })
        const failed = await waitForJob(short.url, slow.json.job_id as string)
        assert.match(failed.error ?? '', /hard time limit/)
        await waitForJob(short.url, quick.json.job_id as string)
        const before = await matchesTheJobs(short.url)
        assert.deepEqual(before.counts, { pending: 0, running: 0, completed: 1, failed: 1 })
        const lastEnd = Math.max(
          ...(await listed(short.url)).map((job) => Date.parse(job.completed_at ?? '')),
        )
        // Kept 3 s past their ends, then gone.
        await until(async () => (await listed(short.url)).length === 0, 10_000, 'both jobs expired')
        assert.ok(Date.now() >= lastEnd + 3000, 'expired no sooner than their retention')
        assert.deepEqual(await listed(short.url), [], 'both expired')
        // The minutes with ends, compared by their own timestamps: the 15-minute window may have moved on
        // by a minute between two summaries taken seconds apart.
        const ends = (summary: Summary) => summary.ended_per_minute.filter((m) => m.completed + m.failed > 0)
        assert.equal(
          ends(before).reduce((n, m) => n + m.completed + m.failed, 0),
          2,
          'both ends counted before',
        )
        const expired = await summaryOf(short.url)
        assert.deepEqual(expired.counts, { pending: 0, running: 0, completed: 0, failed: 0 })
        assert.deepEqual(ends(expired), ends(before))
        assert.equal(await short.service.sweeper.sweep(), 2)
        const swept = await summaryOf(short.url)
        assert.deepEqual(swept.counts, { pending: 0, running: 0, completed: 0, failed: 0 })
        assert.deepEqual(ends(swept), ends(before))
      } finally {
        await short.close()
      }
    })

    if (backend.name === 'redis') {
      test("ends in earlier minutes are read from BullMQ's data points, each in its own minute", async () => {
        const own = await backend.serve()
        const port = Number(new URL(own.config.redisUrl as string).port)
        const metrics = `${own.config.redisPrefix}:${PRIME_CHECKER_QUEUE}:metrics:completed`
        const quick = async () => {
          const created = await createJob(own.url, { algorithm: 'PrimeChecker', params: { number: 97 } })
          return waitForJob(own.url, created.json.job_id as string)
        }
        try {
          // BullMQ writes a minute's data point once a job ends in a later minute: the first end is
          // made to look 3 minutes old, so the second writes it (and zeros for the two after it).
          await quick()
          const now = Date.now()
          assert.equal(await redisCommand(port, `HSET ${metrics} prevTS ${now - 180_000}`), '0')
          const second = await quick()
          const summary = (await call(`${own.url}/job-summary`)).json as {
            ended_per_minute: { minute: string; completed: number }[]
          }
          const minute = (at: number) => new Date(Math.floor(at / 60_000) * 60_000).toISOString()
          const ended = summary.ended_per_minute
            .filter((m) => m.completed > 0)
            .map((m) => [m.minute.replace('+00:00', 'Z'), m.completed])
          assert.deepEqual(ended, [
            [minute(now - 180_000), 1],
            [minute(Date.parse(second.completed_at ?? '')), 1],
          ])
        } finally {
          await own.close()
        }
      })
    }

    if (backend.name === 'embedded') {
      test('an upgraded data directory (schema 2, no counters) counts the jobs it held', async () => {
        // Written as the version before the counters left it: jobs in every state, ends in the window
        // with known latencies (two on a bucket's bound), one end before the window and one past the
        // retention.
        const dataDir = tempDataDir()
        const db = openConnection(join(dataDir, DATABASE_FILE))
        db.exec(MIGRATIONS[0] as string)
        db.exec(MIGRATIONS[1] as string)
        db.exec('PRAGMA user_version = 2')
        const now = Date.now()
        const insert = db.prepare(
          `INSERT INTO jobs (id, algorithm, params, cheap, status, created_at, started_at, completed_at, result,
             metadata, error, runs) VALUES (?, 'PrimeChecker', ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        const result = '{"number":97,"is_prime":true,"factors":[],"factorization_complete":true}'
        const slow = `{"number":${RSA_100}}`
        const ended = (id: string, status: string, end: number, latency: number) =>
          insert.run(
            id,
            '{"number":97}',
            status,
            end - latency,
            end - latency,
            end,
            status === 'completed' ? result : null,
            status === 'completed' ? '{}' : null,
            status === 'failed' ? 'it failed' : null,
            1,
          )
        insert.run('00000000000a', slow, 'pending', now - 9000, null, null, null, null, null, 0)
        insert.run('00000000000b', slow, 'pending', now - 8000, null, null, null, null, null, 0)
        // Left running by a process that died: its run is lost, and the job waits again.
        insert.run('00000000000c', slow, 'running', now - 7000, now - 7000, null, null, null, null, 1)
        const twoMinutesAgo = now - 120_000
        ended('00000000000d', 'completed', twoMinutesAgo, 5)
        ended('00000000000e', 'completed', twoMinutesAgo, 2000)
        ended('00000000000f', 'failed', now - 300_000, 700_000)
        ended('000000000010', 'completed', now - 7_200_000, 40)
        ended('000000000011', 'failed', now - 2 * 86_400_000, 40)
        db.close()

        const upgraded = await backend.start({
          dataDir,
          jobFactorBudgetMs: 60_000,
          workerThreads: 1,
          jobConcurrency: 1,
        })
        try {
          const summary = await summaryOf(upgraded.url)
          const { pending = 0, running = 0, ...finished } = summary.counts
          // The runner may have taken one of the three waiting jobs already.
          assert.equal(pending + running, 3)
          assert.deepEqual(finished, { completed: 3, failed: 1 })
          const minuteOf = (at: number) => Math.floor(at / 60_000) * 60_000
          const nonEmpty = summary.ended_per_minute.filter((m) => m.completed + m.failed > 0)
          const buckets = (entries: [number, number][]) => {
            const all = Array(19).fill(0)
            for (const [i, n] of entries) all[i] = n
            return all
          }
          assert.deepEqual(nonEmpty, [
            {
              minute: new Date(minuteOf(now - 300_000)).toISOString().replace('Z', '+00:00'),
              completed: 0,
              failed: 1,
              latency_ms: { buckets: buckets([[18, 1]]), sum: 700_000 },
            },
            {
              minute: new Date(minuteOf(twoMinutesAgo)).toISOString().replace('Z', '+00:00'),
              completed: 2,
              failed: 0,
              latency_ms: {
                buckets: buckets([
                  [2, 1],
                  [10, 1],
                ]),
                sum: 2005,
              },
            },
          ])
          await matchesTheJobs(upgraded.url)
          // The triggers count from there on.
          const created = await createJob(upgraded.url, { algorithm: 'PrimeChecker', params: { number: 97 } })
          for (const id of ['00000000000a', '00000000000b', '00000000000c']) {
            await call(`${upgraded.url}/jobs/${id}/cancel`, { method: 'POST' })
          }
          await waitForJob(upgraded.url, created.json.job_id as string)
          const after = await matchesTheJobs(upgraded.url)
          assert.deepEqual(after.counts, { pending: 0, running: 0, completed: 4, failed: 4 })
        } finally {
          await upgraded.close()
          rmSync(dataDir, { recursive: true, force: true })
        }
      })
    }
  })
})

// The job endpoints over real HTTP: every status code and body of POST /jobs and GET /jobs/{job_id},
// and a job's whole life as a client sees it; on every job backend.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { postRaw } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { parseExact } from '../helpers/json.js'
import { RSA_100 } from '../helpers/numbers.js'
import { inProcessOnly, type ServedApp } from '../helpers/served.js'
import { sleep, until } from '../helpers/time.js'

forEachBackend((backend) => {
  let server: ServedApp
  before(async () => {
    server = await backend.serve({ jobFactorBudgetMs: 500 })
  })
  // A service that did not start has nothing to close: the hooks after this one (Redis's) still run.
  after(() => server?.close())

  const post = (body: string) => postRaw(`${server.url}/jobs`, body)

  function assertWrapped(json: unknown, code: string, requestId: string | null) {
    const { detail } = json as { detail: Record<string, unknown> }
    assert.deepEqual(Object.keys(detail).sort(), ['details', 'error', 'message', 'request_id'])
    assert.equal(detail.error, code)
    assert.equal(typeof detail.message, 'string')
    assert.equal(detail.request_id, requestId)
    return detail
  }

  describe('POST /jobs', () => {
    test('422 for a body that fails the schema, one entry per problem', async () => {
      const response = await post('{"params": [], "webhook": 5}')
      assert.equal(response.status, 422)
      assert.deepEqual(response.json, {
        detail: [
          {
            type: 'missing',
            loc: ['body', 'algorithm'],
            msg: 'Field required',
            input: { params: [], webhook: 5 },
          },
          {
            type: 'dict_type',
            loc: ['body', 'params'],
            msg: 'Input should be a valid dictionary',
            input: [],
          },
          { type: 'string_type', loc: ['body', 'webhook'], msg: 'Input should be a valid string', input: 5 },
        ],
      })
    })

    test('404 ALGORITHM_NOT_FOUND lists the known algorithms, case-sensitively', async () => {
      const response = await post('{"algorithm": "primechecker", "params": {"number": 7}}')
      assert.equal(response.status, 404)
      const detail = assertWrapped(response.json, 'ALGORITHM_NOT_FOUND', response.headers.get('x-request-id'))
      assert.deepEqual(detail.details, { available_algorithms: ['PrimeChecker'] })
    })

    test('400 VALIDATION_ERROR for bad params, naming params.number', async () => {
      const cases: [string, unknown][] = [
        ['{}', null],
        ['{"number": "abc"}', 'abc'],
        ['{"number": 2.5}', 2.5],
        [`{"number": "${'9'.repeat(4301)}"}`, '9999999999…(4301 digits)'],
      ]
      for (const [params, value] of cases) {
        const response = await post(`{"algorithm": "PrimeChecker", "params": ${params}}`)
        assert.equal(response.status, 400, params)
        const detail = assertWrapped(response.json, 'VALIDATION_ERROR', response.headers.get('x-request-id'))
        assert.deepEqual(detail.details, { field: 'params.number', value })
      }
    })

    test('202 with a fresh pending job; unknown params members are ignored', async () => {
      const before = Date.now()
      const response = await post(
        '{"algorithm": "PrimeChecker", "params": {"number": 7, "extra": true}, "webhook": null}',
      )
      assert.equal(response.status, 202)
      const body = response.json as Record<string, unknown>
      assert.deepEqual(Object.keys(body).sort(), ['created_at', 'job_id', 'message', 'status'])
      assert.match(body.job_id as string, /^[0-9a-f]{12}$/)
      assert.equal(body.status, 'pending')
      assert.equal(typeof body.message, 'string')
      assert.match(body.created_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/)
      const created = Date.parse(body.created_at as string)
      assert.ok(created >= before - 1 && created <= Date.now() + 1)
      const ids = new Set<string>()
      for (let i = 0; i < 50; i++)
        ids.add(
          (await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: i } })).json
            .job_id as string,
        )
      assert.equal(ids.size, 50, 'ids are unique')
    })

    test('400 VALIDATION_ERROR for a webhook that is not an absolute http(s) URL', async () => {
      for (const webhook of [
        'not a url',
        'ftp://example.com/x',
        '/relative',
        `https://example.com/${'a'.repeat(2048)}`,
      ]) {
        const response = await post(
          JSON.stringify({ algorithm: 'PrimeChecker', params: { number: 7 }, webhook }),
        )
        assert.equal(response.status, 400, webhook)
        const detail = assertWrapped(response.json, 'VALIDATION_ERROR', response.headers.get('x-request-id'))
        assert.equal((detail.details as { field: string }).field, 'webhook')
      }
    })

    test('the checks go in order: schema, algorithm, params, webhook', async () => {
      const bad = { params: { number: 'x' }, webhook: 'nope' }
      assert.equal((await post(JSON.stringify({ ...bad, algorithm: 5 }))).status, 422)
      assert.equal((await post(JSON.stringify({ ...bad, algorithm: 'Nope' }))).status, 404)
      const params = await post(JSON.stringify({ ...bad, algorithm: 'PrimeChecker' }))
      assert.equal(
        (params.json as { detail: { details: { field: string } } }).detail.details.field,
        'params.number',
      )
      const webhook = await post(JSON.stringify({ ...bad, algorithm: 'PrimeChecker', params: { number: 7 } }))
      assert.equal(
        (webhook.json as { detail: { details: { field: string } } }).detail.details.field,
        'webhook',
      )
    })

    test('413 PAYLOAD_TOO_LARGE is wrapped under detail', async () => {
      const response = await post(
        `{"algorithm": "PrimeChecker", "params": {"number": "${'1'.repeat(1_100_000)}"}}`,
      )
      assert.equal(response.status, 413)
      assertWrapped(response.json, 'PAYLOAD_TOO_LARGE', response.headers.get('x-request-id'))
    })
  })

  describe('GET /jobs/{job_id}', () => {
    test('422 string_pattern_mismatch for an id that is not 12 lowercase hex characters', async () => {
      for (const id of ['xyz', '0123456789AB', '0123456789abc']) {
        const response = await fetch(`${server.url}/jobs/${id}`)
        assert.equal(response.status, 422, id)
        assert.deepEqual(await response.json(), {
          detail: [
            {
              type: 'string_pattern_mismatch',
              loc: ['path', 'job_id'],
              msg: "String should match pattern '^[0-9a-f]{12}$'",
              input: id,
              ctx: { pattern: '^[0-9a-f]{12}$' },
            },
          ],
        })
      }
    })

    test('404 JOB_NOT_FOUND for an id that was never created', async () => {
      const response = await fetch(`${server.url}/jobs/0123456789ab`)
      assert.equal(response.status, 404)
      const detail = assertWrapped(
        await response.json(),
        'JOB_NOT_FOUND',
        response.headers.get('x-request-id'),
      )
      assert.equal(detail.details, null)
    })

    test("a job's life: pending, then completed with result and metadata, timestamps in order", async () => {
      const created = await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: -12 } })
      assert.equal(created.status, 202)
      const id = created.json.job_id as string
      const job = await waitForJob(server.url, id)
      assert.deepEqual(Object.keys(job).sort(), [
        'algorithm',
        'completed_at',
        'created_at',
        'error',
        'job_id',
        'metadata',
        'result',
        'started_at',
        'status',
      ])
      assert.equal(job.status, 'completed')
      assert.equal(job.algorithm, 'PrimeChecker')
      assert.equal(job.created_at, created.json.created_at)
      assert.deepEqual(job.result, {
        number: -12,
        is_prime: false,
        factors: [-1, 2, 2, 3],
        factorization_complete: true,
        algorithm: 'trial_division',
      })
      assert.equal(job.error, null)
      assert.equal(job.metadata?.algorithm, 'PrimeChecker')
      assert.equal(job.metadata?.version, '1.0.0')
      assert.equal(typeof job.metadata?.elapsed_time, 'number')
      // Open metadata: the process that ran the job, as its log lines name it, and the run's number.
      assert.ok(server.workers().includes(job.metadata?.worker as string), job.metadata?.worker as string)
      assert.equal(job.metadata?.attempt, 1)
      const [c, s, e] = [job.created_at, job.started_at, job.completed_at].map((t) => Date.parse(t as string))
      assert.ok((c as number) <= (s as number) && (s as number) <= (e as number), JSON.stringify(job))
    })

    test('big integers are exact in the stored params and in the result', async () => {
      const response = await post('{"algorithm": "PrimeChecker", "params": {"number": 18446744073709551617}}')
      const id = (response.json as { job_id: string }).job_id
      await waitForJob(server.url, id)
      const text = await (await fetch(`${server.url}/jobs/${id}`)).text()
      assert.match(text, /"number":18446744073709551617,/)
      assert.match(text, /"factors":\[274177,67280421310721\]/)
      const job = parseExact(text) as { result: { factors: unknown[] } }
      assert.equal(job.result.factors.length, 2)
    })

    test('include=params adds the params as stored, exact, after the body that stays as it was', async () => {
      // 2^130: forty digits, far past a double.
      const big = '1361129467683753853853498429727072845824'
      const response = await post(`{"algorithm": "PrimeChecker", "params": {"number": "${big}"}}`)
      const id = (response.json as { job_id: string }).job_id
      // Read at once: pending, or already ended (a cheap job may end first); the params come last either way.
      const early = await (await fetch(`${server.url}/jobs/${id}?include=params`)).text()
      assert.match(
        early,
        new RegExp(`^\\{"job_id":"${id}",.*"metadata":[^]*,"params":\\{"number":${big}\\}\\}$`),
      )
      await waitForJob(server.url, id)
      const plain = await (await fetch(`${server.url}/jobs/${id}`)).text()
      const withParams = await (await fetch(`${server.url}/jobs/${id}?include=params`)).text()
      assert.equal(withParams, `${plain.slice(0, -1)},"params":{"number":${big}}}`)
      assert.doesNotMatch(plain, /"params"/)
      const both = await (await fetch(`${server.url}/jobs/${id}?include=params,params&wait=1`)).text()
      assert.equal(both, withParams)
    })

    test('an include it does not know is a 422 naming the query member', async () => {
      const response = await fetch(`${server.url}/jobs/0123456789ab?include=params,result`)
      assert.equal(response.status, 422)
      const { detail } = (await response.json()) as { detail: { type: string; loc: unknown[] }[] }
      assert.deepEqual(
        detail.map(({ type, loc }) => ({ type, loc })),
        [{ type: 'string_pattern_mismatch', loc: ['query', 'include'] }],
      )
    })

    test('a running job has started_at and nothing else; the state is visible while it runs', async () => {
      const created = await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })
      const running = await waitForJob(
        server.url,
        created.json.job_id as string,
        (job) => job.status !== 'pending',
      )
      assert.equal(running.status, 'running')
      assert.notEqual(running.started_at, null)
      assert.equal(running.completed_at, null)
      assert.equal(running.result, null)
      assert.equal(running.metadata, null)
      const done = await waitForJob(server.url, created.json.job_id as string)
      assert.equal(done.status, 'completed')
      assert.equal(done.result?.factorization_complete, false, 'the job budget ran out')
    })
  })

  // These start a service of their own in this process: they read its metrics, sweeper or store, or
  // count on one process's job slots and worker threads.
  describe('jobs at their limits', { skip: inProcessOnly }, () => {
    test('a job over the hard time limit fails saying so; failed jobs have error and no result', async () => {
      const limited = await backend.start({ jobTimeoutMs: 300, jobFactorBudgetMs: 30_000 })
      try {
        const created = await createJob(limited.url, {
          algorithm: 'PrimeChecker',
          params: { number: RSA_100 },
        })
        const job = await waitForJob(limited.url, created.json.job_id as string)
        assert.equal(job.status, 'failed')
        assert.match(job.error ?? '', /hard time limit of 0.3 s/)
        assert.equal(job.result, null)
        assert.equal(job.metadata, null)
        assert.notEqual(job.completed_at, null)
        // Counted as the end is handled, which on Redis may come just after a read sees the job failed.
        const counted = /jobs_completed_total\{algorithm="PrimeChecker",status="failed"\} 1/
        await until(
          async () => counted.test(await limited.service.metrics.registry.metrics()),
          5000,
          'the failed job counted in jobs_completed_total',
        )
      } finally {
        await limited.close()
      }
    })

    test('503 with Retry-After once max pending jobs wait, and jobs are taken in creation order', async () => {
      const small = await backend.start({ maxPendingJobs: 2, jobConcurrency: 1, jobFactorBudgetMs: 300 })
      try {
        // The only job slot is held by RSA-100 for its whole budget; two more like it wait.
        const long = { algorithm: 'PrimeChecker', params: { number: RSA_100 } }
        const first = await createJob(small.url, long)
        await waitForJob(small.url, first.json.job_id as string, (job) => job.status === 'running')
        const second = await createJob(small.url, long)
        // A cheap job waits its turn too: jobs start in creation order, so it starts with the second.
        const third = await createJob(small.url, { algorithm: 'PrimeChecker', params: { number: 13 } })
        assert.equal(second.status, 202)
        assert.equal(third.status, 202)
        const refused = await createJob(small.url, { algorithm: 'PrimeChecker', params: { number: 17 } })
        assert.equal(refused.status, 503)
        assert.match(refused.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/)
        assertWrapped(refused.json, 'SERVICE_UNAVAILABLE', refused.headers.get('x-request-id'))
        const [ended, , b] = await Promise.all(
          [first, second, third].map((job) => waitForJob(small.url, job.json.job_id as string)),
        )
        // Taken after the second, with it: not before the first had ended. (Its run is inline, so it may
        // begin a moment before the second's, which waits for its worker thread to take it.)
        assert.ok(
          Date.parse(b?.started_at as string) >= Date.parse(ended?.completed_at as string),
          'started in order',
        )
        assert.equal(
          (await createJob(small.url, { algorithm: 'PrimeChecker', params: { number: 17 } })).status,
          202,
        )
      } finally {
        await small.close()
      }
    })

    test('at the default concurrency, short jobs do not wait behind a long one on the only thread', async () => {
      const one = await backend.start({ workerThreads: 1, jobFactorBudgetMs: 6000 })
      try {
        const long = await createJob(one.url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })
        const longId = long.json.job_id as string
        await waitForJob(one.url, longId, (job) => job.status === 'running')
        // 97 and 91 run inline; 2^64 + 1 needs a thread, and gets the spare one.
        const short = await Promise.all(
          [97, 91, '18446744073709551617'].map((number) =>
            createJob(one.url, { algorithm: 'PrimeChecker', params: { number } }),
          ),
        )
        const ended = await Promise.all(short.map((job) => waitForJob(one.url, job.json.job_id as string)))
        assert.deepEqual(
          ended.map((job) => job.status),
          ['completed', 'completed', 'completed'],
        )
        const meanwhile = (await (await fetch(`${one.url}/jobs/${longId}`)).json()) as { status: string }
        assert.equal(meanwhile.status, 'running', 'the short jobs ended while the long one still ran')
      } finally {
        await one.close()
      }
    })

    test('a finished job expires after the TTL: 404, and its row is swept', async () => {
      const brief = await backend.start({ jobTtlSeconds: 1 })
      try {
        const created = await createJob(brief.url, { algorithm: 'PrimeChecker', params: { number: 7 } })
        const id = created.json.job_id as string
        await waitForJob(brief.url, id)
        await sleep(1100)
        const response = await fetch(`${brief.url}/jobs/${id}`)
        assert.equal(response.status, 404)
        assertWrapped(await response.json(), 'JOB_NOT_FOUND', response.headers.get('x-request-id'))
        // With a 1 s TTL the service's own sweeper also runs every second, so this sweep may find the
        // job gone already: what counts is that the store no longer has it (read as of time 0, when it
        // had not expired, a job still stored is found).
        await brief.service.sweeper.sweep()
        assert.equal(await brief.service.backend.read(id, 0), null, 'the expired job is removed')
      } finally {
        await brief.close()
      }
    })

    test('503 SERVICE_UNAVAILABLE from both endpoints when the store cannot be reached', async () => {
      const broken = await backend.start()
      try {
        await broken.service.backend.close()
        const created = await createJob(broken.url, { algorithm: 'PrimeChecker', params: { number: 7 } })
        assert.equal(created.status, 503)
        assert.match(created.headers.get('retry-after') ?? '', /^[0-9]+$/)
        assertWrapped(created.json, 'SERVICE_UNAVAILABLE', created.headers.get('x-request-id'))
        const read = await fetch(`${broken.url}/jobs/0123456789ab`)
        assert.equal(read.status, 503)
        const detail = assertWrapped(
          await read.json(),
          'SERVICE_UNAVAILABLE',
          read.headers.get('x-request-id'),
        )
        assert.doesNotMatch(JSON.stringify(detail), /sqlite|database|stack/i, 'no internals reach the client')
      } finally {
        await broken.close()
      }
    })
  })
})

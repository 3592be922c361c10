// GET /jobs/{job_id}/events over real HTTP, on every job backend, with a process algorithm that reports
// progress at each of its steps (test/fixtures/stepping-process): the stream from state through progress
// to the end, GET /jobs/{job_id} unchanged meanwhile, a cancel, Last-Event-ID, the errors, the bound on
// streams held, and a shutdown that ends the streams rather than waiting for them.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { bodyText, readEvents, type StreamEvent } from '../../../src/client/event-stream.js'
import { apiAndWorker, forEachBackend } from '../../helpers/backends.js'
import { CANCELLED, call, detailOf } from '../../helpers/job-control.js'
import { createJob } from '../../helpers/jobs.js'
import { skipWithoutRedis } from '../../helpers/redis.js'
import { inProcessOnly, perProcessBound, type ServedApp } from '../../helpers/served.js'
import { until } from '../../helpers/time.js'

const STEPPING = fileURLToPath(new URL('../../fixtures/stepping-process', import.meta.url))
/** The service's ALGOSERVE_MAX_EVENT_STREAMS. */
const MAX_STREAMS = 4
/** The members of GET /jobs/{job_id}'s body, as the interface has them. */
const INTERFACE_MEMBERS = [
  'job_id',
  'status',
  'algorithm',
  'created_at',
  'started_at',
  'completed_at',
  'result',
  'error',
  'metadata',
]

/** The events of a stream until it closes, or until `stop` holds for one (the stream is then closed). */
async function collect(response: Response, stop?: (event: StreamEvent) => boolean): Promise<StreamEvent[]> {
  const events: StreamEvent[] = []
  for await (const event of readEvents(bodyText(response.body as ReadableStream<Uint8Array>))) {
    events.push(event)
    if (stop?.(event)) break
  }
  return events
}

const dataOf = (event: StreamEvent | undefined) =>
  JSON.parse(event?.data ?? 'null') as Record<string, unknown>

forEachBackend((backend) => {
  let server: ServedApp
  before(async () => {
    server = await backend.serve({ algorithms: [STEPPING], maxEventStreams: MAX_STREAMS })
  })
  // A service that did not start has nothing to close: the hooks after this one (Redis's) still run.
  after(() => server?.close())

  const submit = async (steps: number, stepMs: number) => {
    const created = await createJob(server.url, { algorithm: 'Stepping', params: { steps, step_ms: stepMs } })
    assert.equal(created.status, 202)
    return created.json.job_id as string
  }
  const open = (id: string, init: { lastEventId?: string; signal?: AbortSignal } = {}) =>
    fetch(`${server.url}/jobs/${id}/events`, {
      headers: init.lastEventId === undefined ? {} : { 'last-event-id': init.lastEventId },
      signal: init.signal,
    })
  const cancel = (id: string) => fetch(`${server.url}/jobs/${id}/cancel`, { method: 'POST' })

  describe('GET /jobs/{job_id}/events', () => {
    test('follows a job from its state through its progress to its end, then closes', async () => {
      const id = await submit(6, 150)
      const response = await open(id)
      assert.equal(response.status, 200)
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/)
      assert.equal(response.headers.get('cache-control'), 'no-cache')
      const events = await collect(response)
      const kinds = events.map((event) => event.event)
      assert.equal(kinds.at(-1), 'end', kinds.join())
      assert.equal(kinds.filter((kind) => kind === 'end').length, 1)
      assert.equal(kinds[0], 'state')
      assert.ok(
        events.some((event) => event.event === 'state' && dataOf(event).status === 'running'),
        'the start is told',
      )
      const progress = events.filter((event) => event.event === 'progress').map(dataOf)
      assert.ok(progress.length >= 2, `${progress.length} progress events`)
      for (const [i, update] of progress.entries()) {
        assert.match(String(update.message), /^step [1-6] of 6$/)
        if (i > 0) assert.ok((update.progress as number) > (progress[i - 1]?.progress as number))
      }
      // Every event has an id of its own, and the end is the job's body as GET /jobs/{job_id} gives it.
      assert.equal(new Set(events.map((event) => event.id)).size, events.length)
      const body = await (await fetch(`${server.url}/jobs/${id}`)).json()
      assert.deepEqual(dataOf(events.at(-1)), body)
      assert.equal(dataOf(events.at(-1)).status, 'completed')
    })

    test("GET /jobs/{job_id} keeps the interface's body while the job reports progress; a cancel ends the stream", async () => {
      const id = await submit(200, 100)
      const response = await open(id)
      const seen = await collect(response, (event) => event.event === 'progress')
      assert.equal(seen.at(-1)?.event, 'progress')
      const read = (await call(`${server.url}/jobs/${id}`)).json
      assert.equal(read.status, 'running')
      assert.deepEqual(Object.keys(read), INTERFACE_MEMBERS)
      const again = await open(id)
      const [, rest] = await Promise.all([
        until(async () => (await cancel(id)).status === 200, 5000, 'cancelled'),
        collect(again),
      ])
      const end = rest.at(-1)
      assert.equal(end?.event, 'end')
      assert.equal(dataOf(end).status, 'failed')
      assert.equal(dataOf(end).error, CANCELLED)
    })

    test('Last-Event-ID: a client that comes back is sent only what changed since; after the end, 204', async () => {
      const id = await submit(8, 150)
      const first = await collect(await open(id), (event) => event.event === 'progress')
      const last = first.at(-1) as StreamEvent
      const rest = await collect(await open(id, { lastEventId: last.id }))
      assert.ok(!rest.some((event) => event.id === last.id), 'nothing seen is sent again')
      assert.ok(
        !rest.some((event) => event.event === 'state' && dataOf(event).status === 'running'),
        'the run it saw start is not told again',
      )
      const end = rest.at(-1) as StreamEvent
      assert.equal(end.event, 'end')
      const done = await open(id, { lastEventId: end.id })
      assert.equal(done.status, 204)
      // An id that is none of ours is no id: the ended job's stream is its end.
      const whole = await collect(await open(id, { lastEventId: 'yesterday' }))
      assert.deepEqual(
        whole.map((event) => event.event),
        ['end'],
      )
      assert.equal(whole[0]?.data, end.data)
    })

    test('an unknown job is a 404 and a malformed id a 422, in the wrapped shape', async () => {
      const missing = await call(`${server.url}/jobs/0123456789ab/events`)
      assert.equal(missing.status, 404)
      assert.equal(detailOf(missing).error, 'JOB_NOT_FOUND')
      const malformed = await call(`${server.url}/jobs/NOT-AN-ID/events`)
      assert.equal(malformed.status, 422)
    })

    test('beyond ALGOSERVE_MAX_EVENT_STREAMS a stream is a 503 with Retry-After; one that closes frees its place', {
      skip: perProcessBound,
    }, async () => {
      const id = await submit(600, 100)
      const clients = Array.from({ length: MAX_STREAMS }, () => new AbortController())
      try {
        const streams = await Promise.all(clients.map((client) => open(id, { signal: client.signal })))
        assert.deepEqual(
          streams.map((stream) => stream.status),
          clients.map(() => 200),
        )
        const refused = await call(`${server.url}/jobs/${id}/events`)
        assert.equal(refused.status, 503)
        assert.equal(detailOf(refused).error, 'SERVICE_UNAVAILABLE')
        assert.ok(Number(refused.headers.get('retry-after')) > 0)
        clients[0]?.abort()
        await until(
          async () => {
            const next = await open(id)
            const ok = next.status === 200
            await next.body?.cancel()
            return ok
          },
          5000,
          'a place freed',
        )
      } finally {
        for (const client of clients) client.abort()
        await cancel(id)
      }
    })
  })

  // In this process: it closes the HTTP server alone, before the rest of the service.
  test('a shutdown ends the open streams instead of waiting for them', {
    timeout: 30_000,
    skip: inProcessOnly,
  }, async () => {
    const own = await backend.start({ algorithms: [STEPPING] })
    try {
      const created = await createJob(own.url, {
        algorithm: 'Stepping',
        params: { steps: 600, step_ms: 100 },
      })
      const id = created.json.job_id as string
      const response = await fetch(`${own.url}/jobs/${id}/events`)
      const events = collect(response)
      await until(async () => (await call(`${own.url}/jobs/${id}`)).json.status === 'running', 10_000)
      // The server's close waits for the requests in flight: the streams must not be such requests
      // (the job itself runs for a minute).
      await own.app.close()
      const told = await events
      assert.ok(told.length >= 1)
      assert.notEqual(told.at(-1)?.event, 'end')
    } finally {
      await own.close()
    }
  })
})

describe('on Redis, an API process streams the job an algoserve worker runs', {
  skip: skipWithoutRedis,
}, () => {
  const processes = apiAndWorker({ algorithms: [STEPPING] })

  test("the worker's progress reaches the API's stream and its list; the stream ends with the job", async () => {
    const created = await createJob(processes.api.url, {
      algorithm: 'Stepping',
      params: { steps: 8, step_ms: 150 },
    })
    const id = created.json.job_id as string
    const response = await fetch(`${processes.api.url}/jobs/${id}/events`)
    const events = collect(response, (event) => event.event === 'progress')
    const listed = await until(
      async () => {
        const page = (await call(`${processes.api.url}/jobs?status=running`)).json.jobs as Record<
          string,
          unknown
        >[]
        const item = page.find((job) => job.job_id === id)
        return item?.progress !== null && item?.progress
      },
      10_000,
      'the progress listed by the API',
    )
    assert.match(String((listed as Record<string, unknown>).message), /^step [1-8] of 8$/)
    assert.equal((await events).at(-1)?.event, 'progress')
    const rest = await collect(await fetch(`${processes.api.url}/jobs/${id}/events`))
    assert.equal(rest.at(-1)?.event, 'end')
    assert.equal(dataOf(rest.at(-1)).status, 'completed')
  })
})

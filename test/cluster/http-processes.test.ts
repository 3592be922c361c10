// `algoserve serve --http-processes 2`, on a real redis-server and on the embedded store (which the primary
// keeps, running the jobs, while the processes ask it), run as operators run it: a primary and two HTTP
// processes on one port. Each request goes on a connection of its own and carries an
// x-request-id; the access log line with that id names the process that answered (its `process`
// field), so each test knows, and checks, which process did what. The primary hands connections out
// round-robin: after one answered by process P, the next goes to the other (steer() below).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { request } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { tempDataDir } from '../helpers/app.js'
import { type Child, listening, loggedLines, start } from '../helpers/child.js'
import { RSA_100 } from '../helpers/numbers.js'
import { startReceiver } from '../helpers/receiver.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../helpers/redis.js'
import { until } from '../helpers/time.js'

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: () => Record<string, unknown>
  /** The index of the HTTP process that answered, from its access log line. */
  process: number
}

/** One request on a connection of its own; `onData` sees a streamed body as it comes. */
function exchange(
  child: Child,
  url: string,
  method: string,
  path: string,
  body?: unknown,
  extra: { headers?: Record<string, string>; onData?: (text: string) => void } = {},
): Promise<Answer> {
  const id = randomUUID()
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, {
      method,
      agent: false,
      headers: {
        'x-request-id': id,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...extra.headers,
      },
    })
    req.on('error', reject)
    req.on('response', (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        text += chunk
        extra.onData?.(text)
      })
      response.on('end', () => {
        answeredBy(child, id).then(
          (process) =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              text,
              json: () => JSON.parse(text) as Record<string, unknown>,
              process,
            }),
          reject,
        )
      })
    })
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

/** The process whose access line carries request id `id` (the log is written in batches: waited for). */
function answeredBy(child: Child, id: string): Promise<number> {
  return until(
    () =>
      loggedLines<{ request_id?: string; process?: number }>(child, id).find((line) => line.request_id === id)
        ?.process,
    10_000,
    `an access line for ${id}`,
  )
}

/** Makes the next connection go to process `index` of two: a probe first, until one lands on the other. */
async function steer(child: Child, url: string, index: number): Promise<void> {
  await until(async () => (await exchange(child, url, 'GET', '/healthz')).process !== index, 10_000)
}

/** `method path` answered by process `index`; fails if the other one answered. */
async function through(
  child: Child,
  url: string,
  index: number,
  method: string,
  path: string,
  body?: unknown,
  extra?: Parameters<typeof exchange>[5],
): Promise<Answer> {
  await steer(child, url, index)
  const answer = await exchange(child, url, method, path, body, extra)
  assert.equal(answer.process, index, `${method} ${path} was to be answered by process ${index}`)
  return answer
}

// A connection the primary hands to a process as it dies is never answered (Node.js's cluster gives it
// to no other): a poll gives up on it and asks again.
const readyz = (url: string) =>
  fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) }).then(
    (response) => response.status,
    () => 0,
  )

/** A metric's value in an exposition, for a series given as it is written (name and labels). */
function value(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

for (const backend of ['redis', 'embedded'] as const) {
  describe(`two HTTP processes, ${backend}`, { skip: backend === 'redis' && skipWithoutRedis }, () => {
    let redis: RedisServer | undefined
    let child: Child
    let url: string
    const DRAIN_MS = 1500
    const dataDir = tempDataDir()

    before(async () => {
      redis = backend === 'redis' ? await startRedis() : undefined
      child = start(
        [
          'serve',
          '--port',
          '0',
          '--http-processes',
          '2',
          '--drain-delay-ms',
          String(DRAIN_MS),
          '--job-factor-budget-ms',
          '3000',
          '--webhook-allow-private',
          '--worker-threads',
          '4',
        ],
        // With the embedded store the primary keeps it and runs the jobs; the processes ask it.
        redis === undefined
          ? { ALGOSERVE_DATA_DIR: dataDir }
          : {
              ALGOSERVE_REDIS_URL: redis.url,
              ALGOSERVE_REDIS_PREFIX: freshPrefix(),
              ALGOSERVE_RUN_JOBS: 'true',
              ALGOSERVE_DATA_DIR: dataDir,
            },
      )
      url = await listening(child)
      await until(
        async () => (await readyz(url)) === 200,
        60_000,
        () => `both processes ready:\n${child.output()}`,
      )
    })
    after(async () => {
      if (child.process.exitCode === null) child.process.kill('SIGKILL')
      await redis?.close()
      rmSync(dataDir, { recursive: true, force: true })
    })

    test('each log line names its process, each has half the worker threads, and both answer', async () => {
      // The HTTP processes' ready lines (with the embedded store the primary logs one too, as `primary`).
      const readyLines = () =>
        loggedLines<{ process?: number | string; threads: number }>(child, '"msg":"ready"').filter(
          (line) => typeof line.process === 'number',
        )
      const processes = () =>
        readyLines()
          .map((line) => line.process)
          .sort()
          .join()
      await until(
        () => processes() === '0,1',
        10_000,
        () => `ready lines of processes 0 and 1: ${processes()}`,
      )
      // ALGOSERVE_WORKER_THREADS=4 is the machine's: two each.
      const threads = readyLines().map((line) => line.threads)
      assert.deepEqual(threads, [2, 2])
      const answered = new Set<number>()
      for (let i = 0; i < 4; i++) answered.add((await exchange(child, url, 'GET', '/healthz')).process)
      assert.deepEqual([...answered].sort(), [0, 1])
    })

    test('a job made through one process is waited on, read and listed through the other', async () => {
      const receiver = await startReceiver()
      try {
        const created = await through(child, url, 0, 'POST', '/jobs', {
          algorithm: 'PrimeChecker',
          params: { number: RSA_100 },
          webhook: `${receiver.url}/hook`,
        })
        assert.equal(created.status, 202)
        const id = created.json().job_id as string
        // Its run lasts the factoring budget (3 s): the wait ends at the job's end, told across processes,
        // not at its 30 s timeout.
        const asked = Date.now()
        const waited = await through(child, url, 1, 'GET', `/jobs/${id}?wait=30`)
        assert.equal(waited.status, 200)
        assert.equal(waited.json().status, 'completed')
        assert.ok(Date.now() - asked < 25_000, `the wait ended after ${Date.now() - asked} ms`)
        const listed = await through(child, url, 1, 'GET', '/jobs?limit=100')
        assert.ok(JSON.stringify(listed.json()).includes(id), listed.text)
        const [delivery] = await receiver.waitFor(1, 20_000)
        assert.equal((JSON.parse(delivery?.body ?? '{}') as { job_id?: string }).job_id, id)
      } finally {
        await receiver.close()
      }
    })

    test('a job made through one process is followed and cancelled through the other', async () => {
      const created = await through(child, url, 1, 'POST', '/jobs', {
        algorithm: 'PrimeChecker',
        params: { number: RSA_100 },
      })
      const id = created.json().job_id as string
      let streamed = ''
      const stream = through(child, url, 0, 'GET', `/jobs/${id}/events`, undefined, {
        onData: (text) => {
          streamed = text
        },
      })
      await until(
        () => streamed.includes('event: state'),
        10_000,
        () => `a state event: ${streamed}`,
      )
      const cancelled = await through(child, url, 1, 'POST', `/jobs/${id}/cancel`)
      assert.equal(cancelled.status, 200, cancelled.text)
      const ended = await stream
      assert.match(ended.text, /event: end\ndata: \{[^\n]*"status":"failed"/)
      const read = await through(child, url, 0, 'GET', `/jobs/${id}`)
      assert.equal(read.json().status, 'failed')
    })

    test('an Idempotency-Key means the same through either process', async () => {
      const body = { algorithm: 'PrimeChecker', params: { number: 97 } }
      const headers = { 'idempotency-key': randomUUID() }
      const first = await through(child, url, 0, 'POST', '/jobs', body, { headers })
      const again = await through(child, url, 1, 'POST', '/jobs', body, { headers })
      assert.equal(first.status, 202)
      assert.equal(again.json().job_id, first.json().job_id)
    })

    test('/metrics answers for both processes, whichever takes the scrape', async () => {
      const series = 'http_requests_total{method="POST",endpoint="/invoke",status="200"}'
      for (const index of [0, 1, 0, 1, 1]) {
        const answer = await through(child, url, index, 'POST', '/invoke', { number: 97 })
        assert.equal(answer.status, 200, answer.text)
      }
      for (const index of [0, 1]) {
        const scrape = await through(child, url, index, 'GET', '/metrics')
        assert.equal(value(scrape.text, series), 5, `${series} scraped through process ${index}`)
        assert.equal(value(scrape.text, 'algoserve_ready'), 1)
        assert.equal(value(scrape.text, 'jobs_waiting{algorithm="PrimeChecker"}'), 0)
        assert.ok(value(scrape.text, 'process_start_time_seconds') !== undefined)
        assert.match(scrape.text, /^algoserve_build_info\{version="[^"]+",node_version="[^"]+"\} 1$/m)
      }
    })

    test('a process that dies is replaced; /readyz is 503 until it serves again', async () => {
      const pidOf = () =>
        loggedLines<{ process?: number; pid: number }>(child, '"msg":"ready"')
          .filter((line) => line.process === 1)
          .at(-1)?.pid
      const dead = pidOf() as number
      process.kill(dead, 'SIGKILL')
      await until(async () => (await readyz(url)) === 503, 10_000, 'readiness 503 with one process')
      await until(
        () => pidOf() !== dead,
        60_000,
        () => `a new process 1:\n${child.output()}`,
      )
      await until(async () => (await readyz(url)) === 200, 10_000, 'ready again')
      assert.ok(loggedLines(child, 'an HTTP process exited').length > 0)
    })

    test('SIGTERM to the primary drains both processes: readiness 503 first, then a clean exit', async () => {
      child.process.kill('SIGTERM')
      // The primary passes the signal on in a message: a request may come before it. Each process answers
      // 503 while it still listens, for the drain delay; after it, a connection would be refused.
      const draining = new Set<number>()
      await until(
        async () => {
          const answer = await exchange(child, url, 'GET', '/readyz')
          if (answer.status === 503) draining.add(answer.process)
          return draining.size === 2
        },
        10_000,
        'readiness 503 from both processes',
      )
      assert.equal(await child.exit, 0)
      const complete = loggedLines<{ process?: number }>(child, '"msg":"shutdown complete"')
      assert.deepEqual(complete.map((line) => line.process).sort(), [0, 1])
    })
  })
}

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { sleep } from '../helpers/time.js'

let server: TestApp
before(async () => {
  server = await startApp()
})
after(() => server.close())

async function scrape(): Promise<string> {
  const response = await fetch(`${server.url}/metrics`)
  assert.equal(response.status, 200)
  assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
  return response.text()
}

/** The value of one sample, or undefined when it is not there. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (.+)$/.exec(line)
    if (match === null || match[1] !== name) continue
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    )
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3])
  }
  return undefined
}

test('exports the nine metrics of the interface with their types', async () => {
  const text = await scrape()
  const types: Record<string, string> = {
    http_requests_total: 'counter',
    http_request_duration_seconds: 'histogram',
    http_requests_in_progress: 'gauge',
    algorithm_executions_total: 'counter',
    algorithm_execution_duration_seconds: 'histogram',
    jobs_created_total: 'counter',
    jobs_completed_total: 'counter',
    job_execution_duration_seconds: 'histogram',
    webhook_deliveries_total: 'counter',
  }
  for (const [name, type] of Object.entries(types)) {
    assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), name)
  }
})

test("exports the runtime's process metrics, but no GC histogram and no _total gauges", async () => {
  const text = await scrape()
  // One series from each of prom-client's collectors that process-metrics.ts calls.
  for (const name of [
    'process_cpu_seconds_total',
    'process_start_time_seconds',
    'process_resident_memory_bytes',
    'process_open_fds',
    'process_max_fds',
    'nodejs_eventloop_lag_p99_seconds',
    'nodejs_active_resources',
    'nodejs_active_handles',
    'nodejs_active_requests',
    'nodejs_heap_size_used_bytes',
    'nodejs_heap_space_size_used_bytes',
    'nodejs_version_info',
  ]) {
    assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name)
  }
  assert.doesNotMatch(text, /nodejs_gc_duration_seconds/)
  assert.doesNotMatch(text, /^# TYPE nodejs_active_\w+_total /m)
})

test('algoserve_build_info names the service version and the Node.js version', async () => {
  const text = await scrape()
  assert.match(text, /^# TYPE algoserve_build_info gauge$/m)
  const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version
  assert.equal(sample(text, 'algoserve_build_info', { version, node_version: process.version }), 1)
})

test('counts HTTP requests by method, route template and numeric status', async () => {
  await postRaw(`${server.url}/invoke`, '{"number": 7}')
  await postRaw(`${server.url}/invoke`, '{"number": 1.5}')
  await fetch(`${server.url}/jobs/0123456789ab`)
  await fetch(`${server.url}/no/such/path`)
  // Refused by Fastify before routing: no hook runs for it.
  assert.equal((await fetch(`${server.url}/jobs/%zz`)).status, 422)
  const text = await scrape()
  assert.equal(sample(text, 'http_requests_total', { method: 'POST', endpoint: '/invoke', status: '200' }), 1)
  assert.equal(sample(text, 'http_requests_total', { method: 'POST', endpoint: '/invoke', status: '422' }), 1)
  assert.equal(
    sample(text, 'http_requests_total', { method: 'GET', endpoint: '/jobs/{job_id}', status: '404' }),
    1,
  )
  assert.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: 'none', status: '404' }), 1)
  assert.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: 'none', status: '422' }), 1)
  assert.doesNotMatch(text, /0123456789ab/, 'never a concrete id in a label')
  assert.equal(
    sample(text, 'http_request_duration_seconds_count', { method: 'POST', endpoint: '/invoke' }),
    2,
  )
  assert.match(text, /http_request_duration_seconds_bucket\{le="0.0005",method="POST",endpoint="\/invoke"\}/)
  // The scrape itself is in progress while it is written.
  assert.equal(sample(text, 'http_requests_in_progress'), 1)
})

test('counts a HEAD request once, under its own method', async () => {
  const response = await fetch(`${server.url}/healthz`, { method: 'HEAD' })
  assert.equal(response.status, 200)
  const text = await scrape()
  assert.equal(
    sample(text, 'http_requests_total', { method: 'HEAD', endpoint: '/healthz', status: '200' }),
    1,
  )
})

test('a request abandoned by its client leaves the in-progress gauge', async () => {
  const client = new AbortController()
  // A 4300-digit prime keeps the worker thread busy for seconds; the client leaves long before.
  const pending = fetch(`${server.url}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"number": "1${'0'.repeat(4295)}3187"}`,
    signal: client.signal,
  }).catch((error: unknown) => error)
  let during: number | undefined
  for (let i = 0; i < 100 && (during ?? 0) < 2; i++)
    during = sample(await scrape(), 'http_requests_in_progress')
  assert.equal(during, 2, 'the long request and the scrape')
  client.abort()
  assert.ok((await pending) instanceof Error, 'the client gave up')
  let after: number | undefined
  for (let i = 0; i < 100 && after !== 1; i++) {
    await sleep(10)
    after = sample(await scrape(), 'http_requests_in_progress')
  }
  assert.equal(after, 1, 'only the scrape is left')
})

test('counts algorithm executions and their duration', async () => {
  const before =
    sample(await scrape(), 'algorithm_executions_total', { algorithm: 'PrimeChecker', status: 'success' }) ??
    0
  await postRaw(`${server.url}/invoke`, '{"number": 18446744073709551617}')
  await postRaw(`${server.url}/invoke`, '{"number": 12}')
  const text = await scrape()
  assert.equal(
    sample(text, 'algorithm_executions_total', { algorithm: 'PrimeChecker', status: 'success' }),
    before + 2,
  )
  assert.equal(
    sample(text, 'algorithm_execution_duration_seconds_count', { algorithm: 'PrimeChecker' }),
    before + 2,
  )
})

test('counts jobs created and finished, their duration, and their algorithm runs', async () => {
  const before = await scrape()
  const runs = (text: string) =>
    sample(text, 'algorithm_executions_total', { algorithm: 'PrimeChecker', status: 'success' }) ?? 0
  const ids = []
  for (const number of ['97', '18446744073709551617']) {
    const created = await createJob(server.url, { algorithm: 'PrimeChecker', params: { number } })
    ids.push(created.json.job_id as string)
  }
  for (const id of ids) await waitForJob(server.url, id)
  const text = await scrape()
  assert.equal(sample(text, 'jobs_created_total', { algorithm: 'PrimeChecker' }), 2)
  assert.equal(sample(text, 'jobs_completed_total', { algorithm: 'PrimeChecker', status: 'completed' }), 2)
  assert.equal(sample(text, 'job_execution_duration_seconds_count', { algorithm: 'PrimeChecker' }), 2)
  assert.ok(
    (sample(text, 'job_execution_duration_seconds_sum', { algorithm: 'PrimeChecker' }) ?? -1) >= 0,
    'a sum',
  )
  assert.equal(runs(text) - runs(before), 2, 'job runs are algorithm executions too')
})

test('promtool check metrics finds nothing', async (t) => {
  const text = await scrape()
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
  if (promtool.error !== undefined) {
    t.skip('SKIPPED: promtool is not installed (apt-get install prometheus)')
    return
  }
  assert.equal(promtool.status, 0, `${promtool.stdout}${promtool.stderr}`)
  assert.equal(`${promtool.stdout}${promtool.stderr}`.trim(), '')
})

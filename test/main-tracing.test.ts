// Tracing as main.ts wires it, in `algoserve serve` child processes: off unless the OTEL_* variables ask
// for it, and then loaded before the service so that a request's trace reaches the OTLP receiver
// (here in protobuf, the SDK's default protocol) through the job to its webhook.
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { tempDataDir } from './helpers/app.js'
import { type Child, listening, loggedLines, serveFresh, start } from './helpers/child.js'
import { type JobBody, waitForJob } from './helpers/jobs.js'
import { RSA_100 } from './helpers/numbers.js'
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './helpers/otlp-receiver.js'
import { type Receiver, startReceiver } from './helpers/receiver.js'
import { freshPrefix, skipWithoutRedis, startRedis } from './helpers/redis.js'
import { until } from './helpers/time.js'

const RECORD_LOADS = fileURLToPath(new URL('./tracing/record-loads.mjs', import.meta.url))
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const CLIENT_SPAN = '00f067aa0ba902b7'

/** The modules the child's ESM loader resolved, once it has served a job. */
function loadedModules(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean)
}

/** GET /metrics, with `accept` if given: its content type and body. */
async function scrape(url: string, accept?: string): Promise<{ type: string | null; body: string }> {
  const response = await fetch(`${url}/metrics`, accept === undefined ? {} : { headers: { accept } })
  assert.equal(response.status, 200)
  return { type: response.headers.get('content-type'), body: await response.text() }
}

// What Prometheus sends: OpenMetrics first, the text format after.
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
const PLAIN = 'text/plain; version=0.0.4; charset=utf-8'

async function serveOneJob(child: Child, webhook: string): Promise<string> {
  const url = await listening(child)
  const response = await fetch(`${url}/jobs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01`,
      tracestate: 'client=1',
    },
    body: JSON.stringify({ algorithm: 'PrimeChecker', params: { number: 97 }, webhook }),
  })
  assert.equal(response.status, 202)
  const { job_id: id } = (await response.json()) as { job_id: string }
  await waitForJob(url, id)
  return id
}

/** A span of job `id` whose name starts with `name`. */
const spanOfJob =
  (id: string) => (name: string) => (span: { name: string; attributes: Record<string, unknown> }) =>
    span.name.startsWith(name) && span.attributes['algoserve.job.id'] === id

/** A job that runs for seconds (RSA-100, 20 s budget) under the client's traceparent, once it runs. */
async function startLongTracedJob(url: string): Promise<{ id: string; running: JobBody }> {
  const created = await fetch(`${url}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
    body: JSON.stringify({ algorithm: 'PrimeChecker', params: { number: RSA_100 } }),
  })
  const { job_id: id } = (await created.json()) as { job_id: string }
  return { id, running: await waitForJob(url, id, (job) => job.status === 'running') }
}

describe('tracing in algoserve serve', () => {
  let otlp: OtlpReceiver
  let webhooks: Receiver
  before(async () => {
    otlp = await startOtlpReceiver()
    webhooks = await startReceiver()
  })
  after(async () => {
    await otlp.close()
    await webhooks.close()
  })

  const loadsFile = (name: string) => {
    const file = join(tmpdir(), `algoserve-loads-${process.pid}-${name}`)
    rmSync(file, { force: true })
    return file
  }

  test('off without an OTLP endpoint: no OpenTelemetry module is loaded, and a job runs as ever', async (t) => {
    const file = loadsFile('off')
    t.after(() => rmSync(file, { force: true }))
    const child = serveFresh(t, [], {
      LOADS_FILE: file,
      NODE_OPTIONS: `--import ${RECORD_LOADS}`,
      ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
    })
    await serveOneJob(child, webhooks.url)
    // No exemplars: an OpenMetrics scrape gets the text format.
    const scraped = await scrape(await listening(child), PROMETHEUS_ACCEPT)
    assert.equal(scraped.type, PLAIN)
    assert.doesNotMatch(scraped.body, /# \{/)
    const loaded = loadedModules(file)
    // The recorder works: the service's own modules are there.
    assert.ok(loaded.some((url) => url.endsWith('/src/service.ts')))
    assert.deepEqual(
      loaded.filter((url) => url.includes('@opentelemetry') || url.includes('/src/tracing/sdk')),
      [],
    )
    child.process.kill('SIGTERM')
    await child.exit
  })

  test('OTEL_SDK_DISABLED=true keeps it off, whatever the endpoint', async (t) => {
    const file = loadsFile('disabled')
    t.after(() => rmSync(file, { force: true }))
    const child = serveFresh(t, [], {
      LOADS_FILE: file,
      NODE_OPTIONS: `--import ${RECORD_LOADS}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_SDK_DISABLED: 'true',
    })
    await listening(child)
    assert.deepEqual(
      loadedModules(file).filter((url) => url.includes('@opentelemetry')),
      [],
    )
    child.process.kill('SIGTERM')
    await child.exit
  })

  test('on with an OTLP endpoint: the request, the run and the webhook are one trace (protobuf)', async (t) => {
    const file = loadsFile('on')
    t.after(() => rmSync(file, { force: true }))
    const child = serveFresh(t, [], {
      LOADS_FILE: file,
      NODE_OPTIONS: `--import ${RECORD_LOADS}`,
      ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_SERVICE_NAME: 'algoserve-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      // Were the SDK to make OTLP metrics, it would export them at this interval.
      OTEL_METRIC_EXPORT_INTERVAL: '100',
    })
    const id = await serveOneJob(child, webhooks.url)
    assert.ok(loadedModules(file).some((url) => url.includes('@opentelemetry/sdk-node')))
    const ofJob = spanOfJob(id)
    const request = await otlp.waitForSpan((span) => span.kind === 2 && span.parentSpanId === CLIENT_SPAN)
    const sent = await otlp.waitForSpan(ofJob('send'))
    const run = await otlp.waitForSpan(ofJob('process'))
    const attempt = await otlp.waitForSpan(ofJob('webhook attempt'))
    for (const span of [request, sent, run, attempt]) {
      assert.equal(span.traceId, TRACE_ID)
      assert.equal(span.contentType, 'application/x-protobuf')
      assert.equal(span.service, 'algoserve-under-test')
    }
    assert.equal(sent.parentSpanId, request.spanId)
    assert.equal(run.parentSpanId, sent.spanId)
    assert.equal(attempt.parentSpanId, sent.spanId)
    // The receiver was sent the trace, with the webhook's HTTP client span as its parent.
    const [delivered] = webhooks.received.filter((received) => received.body.includes(id))
    const traceparent = String(delivered?.headers.traceparent)
    assert.match(traceparent, new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`))
    const post = await otlp.waitForSpan((span) => span.spanId === traceparent.split('-')[2])
    assert.equal(post.parentSpanId, attempt.spanId)
    assert.equal(post.kind, 3)

    // A request of a trace not sampled (its parent's flags say so) leaves no exemplar: its trace is
    // exported nowhere.
    const url = await listening(child)
    const unsampled = '0af7651916cd43dd8448eb211c80319c'
    const invoked = await fetch(`${url}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${unsampled}-${CLIENT_SPAN}-00` },
      body: JSON.stringify({ number: 97 }),
    })
    assert.equal(invoked.status, 200)
    // An OpenMetrics scrape offers exemplars of the spans the receiver was sent; a plain one does not.
    const open = await scrape(url, PROMETHEUS_ACCEPT)
    assert.equal(open.type, 'application/openmetrics-text; version=1.0.0; charset=utf-8')
    assert.match(open.body, /\n# EOF\n$/)
    for (const histogram of ['http_request_duration_seconds', 'job_execution_duration_seconds']) {
      const line = open.body
        .split('\n')
        .find((line) => line.startsWith(`${histogram}_bucket`) && line.includes(`trace_id="${TRACE_ID}"`))
      const spanId = /span_id="([0-9a-f]{16})"/.exec(line ?? '')?.[1]
      assert.ok(spanId !== undefined, `an exemplar of the trace in ${histogram}:\n${open.body}`)
      const span = await otlp.waitForSpan((span) => span.spanId === spanId)
      assert.equal(span.traceId, TRACE_ID)
    }
    assert.doesNotMatch(open.body, new RegExp(unsampled))
    // Traces only: the metrics are /metrics', not the SDK's over OTLP.
    assert.deepEqual(otlp.refused, [])
    // The counters keep their names in the text format after an OpenMetrics scrape renamed them there.
    assert.match(open.body, /^http_requests_total\{/m)
    assert.match(open.body, /^# TYPE http_requests counter$/m)
    for (const accept of [undefined, 'text/plain']) {
      const plain = await scrape(url, accept)
      assert.equal(plain.type, PLAIN)
      assert.doesNotMatch(plain.body, /# \{/)
      assert.match(plain.body, /^# TYPE http_requests_total counter$/m)
    }
    child.process.kill('SIGTERM')
    await child.exit
  })

  for (const backend of ['embedded', 'redis'] as const) {
    test(`the request's access line and the job's end line carry the job's trace, the end its run's span (${backend})`, {
      skip: backend === 'redis' && skipWithoutRedis,
    }, async (t) => {
      const redis = backend === 'redis' ? await startRedis() : undefined
      t.after(() => redis?.close())
      const env = {
        ...(redis === undefined
          ? {}
          : { ALGOSERVE_REDIS_URL: redis.url, ALGOSERVE_REDIS_PREFIX: freshPrefix() }),
        ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_BSP_SCHEDULE_DELAY: '50',
      }
      const child = serveFresh(t, [], env)
      // On Redis, `serve` takes the request and a `worker` runs the job.
      const runner = redis === undefined ? child : start(['worker', '--worker-port', '0'], env)
      const id = await serveOneJob(child, webhooks.url)
      interface Line {
        msg: string
        url?: string
        method?: string
        component?: string
        job_id?: string
        trace_id?: string
        span_id?: string
      }
      // The log is written asynchronously: both lines are there once written.
      const [access, end] = await until(
        () => {
          const access = loggedLines<Line>(child, '"request completed"').find(
            (line) => line.method === 'POST' && line.url === '/jobs',
          )
          const end = loggedLines<Line>(runner, '"job completed"').find((line) => line.job_id === id)
          return access !== undefined && end !== undefined && ([access, end] as const)
        },
        30_000,
        () => `both lines in:\n${child.output()}`,
      )
      const sent = await otlp.waitForSpan(
        (span) => span.name.startsWith('send') && span.attributes['algoserve.job.id'] === id,
      )
      const request = await otlp.waitForSpan((span) => span.spanId === sent.parentSpanId)
      const run = await otlp.waitForSpan(
        (span) => span.name.startsWith('process') && span.attributes['algoserve.job.id'] === id,
      )
      assert.equal(access.trace_id, TRACE_ID)
      assert.equal(access.span_id, request.spanId)
      // The end is told after the run, in the run's span: its line and its time's exemplar name it.
      assert.equal(end.component, 'jobs')
      assert.equal(end.trace_id, TRACE_ID)
      assert.equal(end.span_id, run.spanId)
      const metrics = await scrape(await listening(runner), PROMETHEUS_ACCEPT)
      const exemplar = metrics.body
        .split('\n')
        .find((line) => line.startsWith('job_execution_duration_seconds_bucket') && line.includes(TRACE_ID))
      assert.match(exemplar ?? '', new RegExp(`span_id="${run.spanId}"`), metrics.body)
      runner.process.kill('SIGTERM')
      await runner.exit
      if (runner !== child) {
        child.process.kill('SIGTERM')
        await child.exit
      }
    })
  }

  test('with two HTTP processes on the embedded store, the run and the webhook the primary makes are in the trace', async (t) => {
    const child = serveFresh(t, ['--http-processes', '2'], {
      ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    })
    const id = await serveOneJob(child, webhooks.url)
    const ofJob = spanOfJob(id)
    const sent = await otlp.waitForSpan(ofJob('send'))
    const run = await otlp.waitForSpan(ofJob('process'))
    const attempt = await otlp.waitForSpan(ofJob('webhook attempt'))
    for (const span of [sent, run, attempt]) assert.equal(span.traceId, TRACE_ID)
    assert.equal(run.parentSpanId, sent.spanId)
    assert.equal(attempt.parentSpanId, sent.spanId)
    // The primary's line of the job's end names the run's span.
    const end = await until(
      () =>
        loggedLines<{ job_id?: string; process?: string; span_id?: string }>(child, '"job completed"').find(
          (line) => line.job_id === id,
        ),
      30_000,
      () => `the end line in:\n${child.output()}`,
    )
    assert.equal(end.process, 'primary')
    assert.equal(end.span_id, run.spanId)
    child.process.kill('SIGTERM')
    await child.exit
  })

  test('a run whose worker was killed is traced by the worker that takes over, before its own attempt 2 (redis)', {
    skip: skipWithoutRedis,
  }, async (t) => {
    const redis = await startRedis()
    t.after(() => redis.close())
    const env = {
      ALGOSERVE_REDIS_URL: redis.url,
      ALGOSERVE_REDIS_PREFIX: freshPrefix(),
      ALGOSERVE_JOB_LOCK_MS: '1000',
      ALGOSERVE_JOB_FACTOR_BUDGET_MS: '20000',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    }
    const api = serveFresh(t, [], env)
    const worker = () => start(['worker', '--worker-port', '0'], env)
    const first = worker()
    const url = await listening(api)
    await listening(first)
    const { id, running } = await startLongTracedJob(url)
    const second = worker()
    await listening(second)
    first.process.kill('SIGKILL')
    await first.exit
    await waitForJob(url, id, (job) => job.status === 'running' && job.started_at !== running.started_at)
    // The second run ends at its worker's shutdown (finished or given back); its span goes out then.
    second.process.kill('SIGTERM')
    await second.exit
    const ofJob = spanOfJob(id)
    const sent = await otlp.waitForSpan(ofJob('send'))
    await assertTakenOver(ofJob('process'), sent, running, `:${first.process.pid}`)
    api.process.kill('SIGTERM')
    await api.exit
  })

  test('a run lost with its process is traced at the restart on its data directory, before attempt 2 (embedded)', async (t) => {
    const dataDir = tempDataDir()
    t.after(() => rmSync(dataDir, { recursive: true, force: true }))
    const env = {
      ALGOSERVE_JOB_FACTOR_BUDGET_MS: '20000',
      // The second run is given back at once at its shutdown.
      ALGOSERVE_DRAIN_DELAY_MS: '0',
      ALGOSERVE_SHUTDOWN_GRACE_MS: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    }
    const serve = () => start(['serve', '--data-dir', dataDir, '--port', '0'], env)
    const first = serve()
    const url = await listening(first)
    const { id, running } = await startLongTracedJob(url)
    const ofJob = spanOfJob(id)
    const sent = await otlp.waitForSpan(ofJob('send'))
    first.process.kill('SIGKILL')
    await first.exit
    const second = serve()
    const again = await listening(second)
    await waitForJob(again, id, (job) => job.status === 'running' && job.started_at !== running.started_at)
    // The second run ends at the shutdown (given back); its span goes out then.
    second.process.kill('SIGTERM')
    await second.exit
    await assertTakenOver(ofJob('process'), sent, running)
  })

  /**
   * The job's runs are spans under its send span `sent`: attempt 1, lost, from the start the job
   * read while it ran (`running`) to when the loss was found, by the worker whose name ends in `worker`;
   * then attempt 2, from then on.
   */
  async function assertTakenOver(
    isRun: (span: ReceivedSpan) => boolean,
    sent: ReceivedSpan,
    running: JobBody,
    worker?: string,
  ): Promise<void> {
    const attempt = (n: number) => (span: ReceivedSpan) =>
      isRun(span) && span.attributes['algoserve.job.attempt'] === n
    const lost = await otlp.waitForSpan(attempt(1))
    const second = await otlp.waitForSpan(attempt(2))
    // One span of attempt 1 (a later run too may be lost on a loaded machine, its lock not kept).
    assert.equal(otlp.spans.filter(attempt(1)).length, 1)
    for (const run of [lost, second]) {
      assert.equal(run.traceId, TRACE_ID)
      assert.equal(run.parentSpanId, sent.spanId)
    }
    assert.equal(lost.status, 2)
    assert.equal(lost.statusMessage, 'worker lost')
    assert.equal(lost.attributes['algoserve.job.outcome'], 'lost')
    if (worker !== undefined) assert.ok(String(lost.attributes['algoserve.job.worker']).endsWith(worker))
    const ms = (nanos: string) => Number(BigInt(nanos) / 1_000_000n)
    assert.equal(ms(lost.startTimeUnixNano), Date.parse(running.started_at ?? ''))
    assert.ok(ms(lost.endTimeUnixNano) > ms(lost.startTimeUnixNano))
    assert.ok(ms(lost.endTimeUnixNano) <= ms(second.startTimeUnixNano))
  }
})

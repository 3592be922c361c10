// Tracing on, in this process, on both backends: the SDK started before the service's modules load (as
// main.ts does), exporting in OTLP/JSON to a real receiver. One job with a webhook whose first attempt
// fails: the request, the send, the queue wait, the run and each webhook attempt with its HTTP client
// span are one trace, each under the right parent.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { startOtlpReceiver } from '../helpers/otlp-receiver.js'
import { startReceiver } from '../helpers/receiver.js'

const otlp = await startOtlpReceiver()
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url
process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json'
process.env.OTEL_BSP_SCHEDULE_DELAY = '20'
const { startTracing } = await import('../../src/tracing/sdk.js')
const tracing = startTracing()
const { forEachBackend } = await import('../helpers/backends.js')
const { createJob, waitForJob } = await import('../helpers/jobs.js')
after(async () => {
  await tracing.shutdown()
  await otlp.close()
})

const SERVER = 2
const CLIENT = 3
const PRODUCER = 4
const CONSUMER = 5

forEachBackend((backend) => {
  test('one job with a retried webhook is one trace, from the request to each attempt', async (t) => {
    // The first attempt fails (500), the second is delivered.
    const webhooks = await startReceiver((n) => (n === 0 ? 500 : 204))
    const server = await backend.start({ webhookAllowPrivate: true }, { webhooks: { retryWaitsMs: [20] } })
    t.after(async () => {
      await server.close()
      await webhooks.close()
    })
    const created = await createJob(server.url, {
      algorithm: 'PrimeChecker',
      params: { number: 97 },
      webhook: webhooks.url,
    })
    assert.equal(created.status, 202)
    const id = created.json.job_id as string
    assert.equal((await waitForJob(server.url, id)).status, 'completed')
    await webhooks.waitFor(2)
    const ofJob = (name: string) => (span: { name: string; attributes: Record<string, unknown> }) =>
      span.name.startsWith(name) && span.attributes['algoserve.job.id'] === id
    const sent = await otlp.waitForSpan(ofJob('send '))
    const wait = await otlp.waitForSpan(ofJob('wait '))
    const run = await otlp.waitForSpan(ofJob('process '))
    const attemptOf = (n: number) =>
      otlp.waitForSpan(
        (span) => ofJob('webhook attempt')(span) && span.attributes['algoserve.webhook.attempt'] === n,
      )
    const attempts = [await attemptOf(1), await attemptOf(2)]
    const request = await otlp.waitForSpan((span) => span.spanId === sent.parentSpanId)
    assert.equal(request.kind, SERVER)
    assert.match(request.name, /^POST/)
    assert.equal(request.contentType, 'application/json')
    assert.equal(sent.kind, PRODUCER)
    assert.equal(sent.attributes['messaging.destination.name'], 'jobs.PrimeChecker')
    assert.equal(sent.attributes['messaging.operation.type'], 'send')
    for (const span of [wait, run, ...attempts]) {
      assert.equal(span.traceId, sent.traceId)
      assert.equal(span.parentSpanId, sent.spanId)
    }
    assert.equal(run.kind, CONSUMER)
    assert.deepEqual(
      {
        operation: run.attributes['messaging.operation.type'],
        message: run.attributes['messaging.message.id'],
        algorithm: run.attributes['algoserve.algorithm'],
        version: typeof run.attributes['algoserve.algorithm.version'],
        attempt: run.attributes['algoserve.job.attempt'],
        outcome: run.attributes['algoserve.job.outcome'],
      },
      {
        operation: 'process',
        message: id,
        algorithm: 'PrimeChecker',
        version: 'string',
        attempt: 1,
        outcome: 'completed',
      },
    )
    assert.deepEqual(
      attempts.map((span) => span.attributes['algoserve.webhook.outcome']),
      ['retry', 'delivered'],
    )
    // Each attempt sent the trace, with its own HTTP client span as the receiver's parent.
    for (const [n, received] of webhooks.received.slice(0, 2).entries()) {
      const [, traceId, parentId] = String(received.headers.traceparent).split('-')
      assert.equal(traceId, sent.traceId)
      const post = await otlp.waitForSpan((span) => span.spanId === parentId)
      assert.equal(post.kind, CLIENT)
      assert.equal(post.parentSpanId, attempts[n]?.spanId)
    }
  })
})

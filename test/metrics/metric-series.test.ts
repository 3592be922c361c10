import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Counter, Histogram, Registry } from 'prom-client'
import { LabelledCounter, LabelledHistogram } from '../../src/metrics/metric-series.js'

const BUCKETS = [0.001, 0.01, 0.1, 1]

// The same observations through prom-client's own classes and through ours must give the same text.
describe('label-bound series', () => {
  it('counters read exactly as prom-client counters', async () => {
    const theirs = new Registry()
    const ours = new Registry()
    const options = { name: 'requests_total', help: 'Requests.', labelNames: ['method', 'status'] as const }
    const reference = new Counter({ ...options, registers: [theirs] })
    const counter = new LabelledCounter({ ...options, registers: [ours] })

    assert.equal(await ours.metrics(), await theirs.metrics(), 'no series yet')
    const calls: [string, number, number][] = [
      ['GET', 200, 3],
      ['POST', 422, 1],
      ['GET', 404, 2],
    ]
    for (const [method, status, times] of calls) {
      const series = counter.labels({ method, status })
      for (let i = 0; i < times; i++) {
        reference.labels({ method, status }).inc()
        series.inc()
      }
    }
    // A second labels() call with the same values is the same series.
    counter.labels({ method: 'GET', status: 200 }).inc()
    reference.labels({ method: 'GET', status: 200 }).inc()

    const text = await ours.metrics()
    assert.equal(text, await theirs.metrics())
    assert.match(text, /^requests_total\{method="GET",status="200"\} 4$/m)
    assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON())
  })

  it('histograms read exactly as prom-client histograms, +Inf, _sum and _count included', async () => {
    const theirs = new Registry()
    const ours = new Registry()
    const options = { name: 'latency_seconds', help: 'Latency.', labelNames: ['endpoint'] as const }
    const reference = new Histogram({ ...options, buckets: BUCKETS, registers: [theirs] })
    const histogram = new LabelledHistogram({ ...options, buckets: BUCKETS, registers: [ours] })

    // On a bound, between bounds, below the first and above the last.
    const observations: [string, number][] = [
      ['/invoke', 0.001],
      ['/invoke', 0.0005],
      ['/invoke', 0.05],
      ['/invoke', 3],
      ['/healthz', 0.0002],
    ]
    for (const [endpoint, seconds] of observations) {
      reference.labels({ endpoint }).observe(seconds)
      histogram.labels({ endpoint }).observe(seconds)
    }

    const text = await ours.metrics()
    assert.equal(text, await theirs.metrics())
    assert.match(text, /^latency_seconds_bucket\{le="0.001",endpoint="\/invoke"\} 2$/m)
    assert.match(text, /^latency_seconds_bucket\{le="1",endpoint="\/invoke"\} 3$/m)
    assert.match(text, /^latency_seconds_bucket\{le="\+Inf",endpoint="\/invoke"\} 4$/m)
    assert.match(text, /^latency_seconds_count\{endpoint="\/healthz"\} 1$/m)
    // prom-client's values also carry its exemplars (none here), which ours do not keep.
    const withoutExemplars = (metrics: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
      metrics.map(({ values, ...metric }) => ({
        ...metric,
        values: values.map((value) => {
          const { exemplar, ...rest } = value as typeof value & { exemplar?: unknown }
          return rest
        }),
      }))
    assert.deepEqual(await ours.getMetricsAsJSON(), withoutExemplars(await theirs.getMetricsAsJSON()))
  })

  it('reset zeroes every series, and series already handed out go on counting', async () => {
    const registry = new Registry()
    const counter = new LabelledCounter({
      name: 'c_total',
      help: 'C.',
      labelNames: ['k'],
      registers: [registry],
    })
    const histogram = new LabelledHistogram({
      name: 'h_seconds',
      help: 'H.',
      labelNames: ['k'],
      buckets: BUCKETS,
      registers: [registry],
    })
    const count = counter.labels({ k: 'a' })
    const time = histogram.labels({ k: 'a' })
    count.inc()
    time.observe(0.5)
    registry.resetMetrics()
    count.inc()
    time.observe(0.005)

    const text = await registry.metrics()
    assert.match(text, /^c_total\{k="a"\} 1$/m)
    assert.match(text, /^h_seconds_bucket\{le="0.001",k="a"\} 0$/m)
    assert.match(text, /^h_seconds_bucket\{le="0.01",k="a"\} 1$/m)
    assert.match(text, /^h_seconds_sum\{k="a"\} 0.005$/m)
  })

  it('refuses label names it was not declared with', () => {
    const counter = new LabelledCounter({ name: 'c_total', help: 'C.', labelNames: ['k'], registers: [] })
    assert.throws(() => counter.labels({ other: 'x' } as never), /c_total takes the labels k; got other/)
    assert.throws(() => counter.labels({ k: 'a', other: 'x' } as never), /takes the labels k/)
  })
})

// The OpenMetrics exposition: the same series as prom-client's own OpenMetrics registry writes them, the
// histograms' exemplars once offered, and the registry's text exposition unchanged by it.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Counter, Histogram, type OpenMetricsContentType, Registry } from 'prom-client'
import {
  type ExemplarLabels,
  exemplarsOffered,
  LabelledCounter,
  LabelledHistogram,
  offerExemplars,
} from '../../src/metrics/metric-series.js'
import { openMetricsText, wantsOpenMetrics } from '../../src/metrics/open-metrics.js'

const BUCKETS = [0.001, 0.01, 0.1, 1]
const counterOptions = { name: 'requests_total', help: 'Requests.', labelNames: ['status'] as const }
const histogramOptions = { name: 'latency_seconds', help: 'Latency.', labelNames: ['route'] as const }

describe('openMetricsText', () => {
  it('writes what an OpenMetrics registry writes, and leaves the text exposition as it was', async () => {
    const ours = new Registry()
    const theirs = new Registry<OpenMetricsContentType>()
    theirs.setContentType(Registry.OPENMETRICS_CONTENT_TYPE)
    const counter = new LabelledCounter({ ...counterOptions, registers: [ours] })
    const histogram = new LabelledHistogram({ ...histogramOptions, buckets: BUCKETS, registers: [ours] })
    const jobs = new Counter({ name: 'jobs_total', help: 'Jobs.', registers: [ours] })
    const reference = {
      counter: new Counter({ ...counterOptions, registers: [theirs] }),
      histogram: new Histogram({ ...histogramOptions, buckets: BUCKETS, registers: [theirs] }),
      jobs: new Counter({ name: 'jobs_total', help: 'Jobs.', registers: [theirs] }),
    }
    for (const [status, route, seconds] of [
      [200, '/a', 0.005],
      [404, '/b', 2],
      [200, '/a', 0.0005],
    ] as const) {
      counter.labels({ status }).inc()
      reference.counter.labels({ status }).inc()
      histogram.labels({ route }).observe(seconds)
      reference.histogram.labels({ route }).observe(seconds)
      jobs.inc()
      reference.jobs.inc()
    }
    const text = await ours.metrics()
    const open = await openMetricsText(ours)
    assert.equal(open, await theirs.metrics())
    assert.match(open, /^# TYPE requests counter\nrequests_total\{status="200"\} 2$/m)
    assert.match(open, /\n# EOF\n$/)
    assert.equal(await ours.metrics(), text, 'the text exposition after an OpenMetrics one')
    assert.match(text, /^# TYPE requests_total counter$/m)
  })

  it('offers the exemplars of observations made in a span, and only in OpenMetrics', async () => {
    assert.equal(exemplarsOffered(), false)
    let span: ExemplarLabels | undefined
    offerExemplars(() => span)
    assert.equal(exemplarsOffered(), true)
    const registry = new Registry()
    const histogram = new LabelledHistogram({ ...histogramOptions, buckets: BUCKETS, registers: [registry] })
    const series = histogram.labels({ route: '/a' })
    series.observe(0.005)
    span = { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' }
    series.observe(0.05)
    series.observe(5)
    const open = await openMetricsText(registry)
    const exemplar = (le: string) =>
      new RegExp(
        `^latency_seconds_bucket\\{le="${le}",route="/a"\\} [0-9]+ # \\{trace_id="4bf92f3577b34da6a3ce929d0e0e4736",span_id="00f067aa0ba902b7"\\} [0-9.e+-]+ [0-9.]+$`,
        'm',
      )
    assert.match(open, exemplar('0.1'))
    assert.match(open, exemplar('\\+Inf'))
    // Outside a span: counted, with no exemplar.
    assert.match(open, /^latency_seconds_bucket\{le="0.01",route="\/a"\} 1$/m)
    assert.doesNotMatch(await registry.metrics(), /# \{/)
    histogram.reset()
    assert.doesNotMatch(await openMetricsText(registry), /# \{/)
  })

  it('is what a scraper asks for by naming application/openmetrics-text', () => {
    assert.equal(wantsOpenMetrics('application/openmetrics-text;version=1.0.0,text/plain;q=0.5'), true)
    assert.equal(wantsOpenMetrics('text/plain'), false)
    assert.equal(wantsOpenMetrics('*/*'), false)
    assert.equal(wantsOpenMetrics(undefined), false)
  })
})

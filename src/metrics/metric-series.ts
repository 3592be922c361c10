// Counters and histograms for the metrics counted on every request, whose label values are bound once.
// prom-client's labelled children hash and check their label values again on every inc() and observe(), and
// each call allocates; these keep plain numbers per series. They hand prom-client's Registry the values its
// own Counter and Histogram would, so /metrics reads the same byte for byte
// (test/metrics/metric-series.test.ts).
import type { Metric, Registry } from 'prom-client'

type LabelValues<L extends string> = Readonly<Record<L, string | number>>

export interface SeriesOptions<L extends string> {
  name: string
  help: string
  labelNames: readonly L[]
  registers: readonly Registry[]
}

/** The ids of the span an observation was made in: an exemplar's labels (OpenMetrics). */
export type ExemplarLabels = { trace_id: string; span_id: string }

/** An exemplar as prom-client's Registry writes it after a bucket's line; timestamp in seconds. */
interface Exemplar {
  labelSet: ExemplarLabels
  value: number
  timestamp: number
}

/** Where histograms made from now on read the span of each observation; null: they keep none. */
let exemplarSource: (() => ExemplarLabels | undefined) | null = null

/**
 * From now on, the histograms' series keep the last observation made in a span of each bucket as its
 * exemplar. Called by tracing at its start, before any series is made: without it, a series is the plain
 * one and an observation costs what it did.
 */
export function offerExemplars(source: () => ExemplarLabels | undefined): void {
  exemplarSource = source
}

/** Whether exemplars are offered (an OpenMetrics scrape shows them). */
export const exemplarsOffered = (): boolean => exemplarSource !== null

/** What prom-client's Registry reads of a metric: one entry per line of the exposition text. */
interface ExportedValue {
  value: number
  labels: Record<string, string | number>
  sharedLabels?: Record<string, string | number>
  metricName?: string
  exemplar?: Exemplar
}

interface Exported {
  name: string
  help: string
  type: 'counter' | 'histogram'
  aggregator: 'sum'
  values: ExportedValue[]
}

abstract class LabelledMetric<
  L extends string,
  S extends { readonly labels: LabelValues<L>; reset(): void },
> {
  readonly name: string
  readonly help: string
  readonly aggregator = 'sum'
  abstract readonly type: Exported['type']
  readonly #labelNames: readonly L[]
  protected readonly series = new Map<string, S>()

  constructor(options: SeriesOptions<L>) {
    this.name = options.name
    this.help = options.help
    this.#labelNames = options.labelNames
    // The Registry reads metrics by duck typing: name, help, type, aggregator, get(), reset().
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric)
  }

  /** Resets every series to zero; series handed out by labels() go on counting. */
  reset(): void {
    for (const series of this.series.values()) series.reset()
  }

  abstract getForPromString(): Exported

  protected seriesFor(labels: LabelValues<L>, make: (labels: LabelValues<L>) => S): S {
    const names = Object.keys(labels)
    if (names.length !== this.#labelNames.length || this.#labelNames.some((name) => !(name in labels))) {
      throw new Error(`${this.name} takes the labels ${this.#labelNames.join(', ')}; got ${names.join(', ')}`)
    }
    const key = JSON.stringify(this.#labelNames.map((name) => labels[name]))
    let series = this.series.get(key)
    if (series === undefined) {
      series = make({ ...labels })
      this.series.set(key, series)
    }
    return series
  }

  get(): Exported {
    const exported = this.getForPromString()
    return {
      ...exported,
      values: exported.values.map(({ sharedLabels, labels, ...value }) => ({
        ...value,
        labels: { ...labels, ...sharedLabels },
      })),
    }
  }
}

class CounterSeries<L extends string> {
  value = 0
  constructor(readonly labels: LabelValues<L>) {}

  inc(): void {
    this.value++
  }

  reset(): void {
    this.value = 0
  }
}

export class LabelledCounter<L extends string> extends LabelledMetric<L, CounterSeries<L>> {
  readonly type = 'counter'

  /** The series for these label values, made on first use; keep it and call inc() on it. */
  labels(labels: LabelValues<L>): { inc(): void } {
    return this.seriesFor(labels, (bound) => new CounterSeries(bound))
  }

  getForPromString(): Exported {
    const values = [...this.series.values()].map(({ labels, value }) => ({ labels, value }))
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }
}

class HistogramSeries<L extends string> {
  /** Observations per bucket, not cumulative; the last one counts those above every bound. */
  readonly counts: number[]
  sum = 0
  count = 0

  constructor(
    readonly labels: LabelValues<L>,
    readonly bounds: readonly number[],
  ) {
    this.counts = new Array<number>(bounds.length + 1).fill(0)
  }

  observe(value: number): void {
    // A metric never fails the request it measures; our own timings are always finite.
    if (!Number.isFinite(value)) return
    const { bounds } = this
    let bucket = 0
    while (bucket < bounds.length && value > (bounds[bucket] as number)) bucket++
    this.counts[bucket] = (this.counts[bucket] as number) + 1
    this.sum += value
    this.count++
  }

  /** The exemplar of bucket `bucket`, if any. */
  exemplar(_bucket: number): Exemplar | undefined {
    return undefined
  }

  reset(): void {
    this.counts.fill(0)
    this.sum = 0
    this.count = 0
  }
}

/** A series that keeps, per bucket, the last observation made in a span: made only when tracing is on. */
class ExemplarHistogramSeries<L extends string> extends HistogramSeries<L> {
  readonly #exemplars: (Exemplar | undefined)[]

  constructor(
    labels: LabelValues<L>,
    bounds: readonly number[],
    readonly source: () => ExemplarLabels | undefined,
  ) {
    super(labels, bounds)
    this.#exemplars = new Array<Exemplar | undefined>(bounds.length + 1)
  }

  override observe(value: number): void {
    super.observe(value)
    const labelSet = Number.isFinite(value) ? this.source() : undefined
    if (labelSet === undefined) return
    const { bounds } = this
    let bucket = 0
    while (bucket < bounds.length && value > (bounds[bucket] as number)) bucket++
    this.#exemplars[bucket] = { labelSet, value, timestamp: Date.now() / 1000 }
  }

  override exemplar(bucket: number): Exemplar | undefined {
    return this.#exemplars[bucket]
  }

  override reset(): void {
    super.reset()
    this.#exemplars.fill(undefined)
  }
}

export class LabelledHistogram<L extends string> extends LabelledMetric<L, HistogramSeries<L>> {
  readonly type = 'histogram'
  readonly #bounds: readonly number[]

  constructor(options: SeriesOptions<L> & { buckets: readonly number[] }) {
    super(options)
    this.#bounds = [...options.buckets].sort((a, b) => a - b)
  }

  /** The series for these label values, made on first use; keep it and call observe() on it. */
  labels(labels: LabelValues<L>): { observe(value: number): void } {
    const source = exemplarSource
    return this.seriesFor(labels, (bound) =>
      source === null
        ? new HistogramSeries(bound, this.#bounds)
        : new ExemplarHistogramSeries(bound, this.#bounds, source),
    )
  }

  getForPromString(): Exported {
    const bucket = `${this.name}_bucket`
    const values: ExportedValue[] = []
    for (const series of this.series.values()) {
      const sharedLabels = series.labels
      let cumulative = 0
      this.#bounds.forEach((le, i) => {
        cumulative += series.counts[i] as number
        const exemplar = series.exemplar(i)
        values.push({
          labels: { le },
          sharedLabels,
          value: cumulative,
          metricName: bucket,
          ...(exemplar === undefined ? {} : { exemplar }),
        })
      })
      const inf = series.exemplar(this.#bounds.length)
      values.push(
        {
          labels: { le: '+Inf' },
          sharedLabels,
          value: series.count,
          metricName: bucket,
          ...(inf === undefined ? {} : { exemplar: inf }),
        },
        { labels: {}, sharedLabels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels, value: series.count, metricName: `${this.name}_count` },
      )
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }
}

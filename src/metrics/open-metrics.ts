// The OpenMetrics exposition of a registry, which alone carries the histograms' exemplars
// (metric-series.ts): prom-client writes them only from a registry of that content type. The metrics are
// read through stand-ins: such a registry renames each counter it writes (http_requests_total to
// http_requests), which would change the text exposition of the registry the counter belongs to.
import { type Metric, type OpenMetricsContentType, Registry } from 'prom-client'

export const OPENMETRICS_CONTENT_TYPE = Registry.OPENMETRICS_CONTENT_TYPE

interface Readable {
  name: string
  help: string
  type: string
  aggregator: string
  get(): unknown
  getForPromString?: () => unknown
}

/** Whether a scrape's Accept header asks for OpenMetrics (as Prometheus's does, first). */
export const wantsOpenMetrics = (accept: string | undefined): boolean =>
  accept?.includes('application/openmetrics-text') === true

export async function openMetricsText(registry: Registry): Promise<string> {
  const open = new Registry<OpenMetricsContentType>()
  open.setContentType(Registry.OPENMETRICS_CONTENT_TYPE)
  for (const metric of registry.getMetricsAsArray() as unknown as Readable[]) {
    // OpenMetrics names a counter's family without `_total`, and its samples with it.
    const name = metric.type === 'counter' ? metric.name.replace(/_total$/, '') : metric.name
    const read = async () => {
      const got = (await (metric.getForPromString ?? metric.get).call(metric)) as object
      return { ...got, name }
    }
    open.registerMetric({
      name,
      help: metric.help,
      type: metric.type,
      aggregator: metric.aggregator,
      get: read,
      getForPromString: read,
    } as unknown as Metric)
  }
  return open.metrics()
}

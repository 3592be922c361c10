// GET /metrics: the Prometheus text exposition of this process; OpenMetrics, with the latencies'
// exemplars, to a scraper that asks for it while tracing is on (docs/metrics.md#exemplars).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { exemplarsOffered } from '../metrics/metric-series.js'
import { METRICS_CONTENT_TYPE, type Metrics } from '../metrics/metrics.js'
import { OPENMETRICS_CONTENT_TYPE, openMetricsText, wantsOpenMetrics } from '../metrics/open-metrics.js'

export interface MetricsRouteOptions {
  metrics: Metrics
}

export const metricsRoutes: FastifyPluginAsyncTypebox<MetricsRouteOptions> = async (app, options) => {
  app.get(
    '/metrics',
    {
      config: { kind: 'metrics' },
      schema: {
        summary: 'Prometheus metrics',
        operationId: 'metrics',
        tags: ['operations'],
        produces: [METRICS_CONTENT_TYPE],
        response: {
          200: {
            description: 'Text exposition format 0.0.4.',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
        'x-examples': () => ({
          responses: {
            200:
              '# HELP http_requests_total HTTP requests.\n# TYPE http_requests_total counter\n' +
              'http_requests_total{method="POST",endpoint="/invoke",status="200"} 3\n',
          },
        }),
      },
    },
    async (request, reply) => {
      const { merged } = options.metrics
      // Exemplars do not survive the merge of several processes' metrics: those answer in text.
      if (merged === undefined && exemplarsOffered() && wantsOpenMetrics(request.headers.accept)) {
        reply.type(OPENMETRICS_CONTENT_TYPE)
        return openMetricsText(options.metrics.registry)
      }
      reply.type(METRICS_CONTENT_TYPE)
      return merged === undefined ? options.metrics.registry.metrics() : merged()
    },
  )
}

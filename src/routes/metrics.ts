// GET /metrics: the Prometheus text exposition of this process.
import type { FastifyInstance } from 'fastify'
import { METRICS_CONTENT_TYPE, type Metrics } from '../metrics/metrics.js'

export interface MetricsRouteOptions {
  metrics: Metrics
}

export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
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
      },
    },
    async (_request, reply) => {
      reply.type(METRICS_CONTENT_TYPE)
      return options.metrics.registry.metrics()
    },
  )
}

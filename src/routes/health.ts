// GET /healthz (the process answers) and GET /readyz (every check holds and no shutdown has begun);
// the same verdict is the algoserve_ready gauge.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { described, HealthResponse, ReadinessResponse } from '../http/schemas.js'
import type { Metrics } from '../metrics/metrics.js'

export interface HealthRouteOptions {
  /** Named readiness checks, as they are now (a reload adds and removes some); each answers whether its
   * part can serve. */
  checks: () => Record<string, () => boolean | Promise<boolean>>
  isShuttingDown: () => boolean
  metrics: Metrics
  /** `algoserve worker`: the algorithms it runs, named in /readyz so that an operator sees what it takes. */
  algorithms?: string[]
}

async function readiness(options: HealthRouteOptions) {
  const checks: Record<string, boolean> = {}
  for (const [name, check] of Object.entries(options.checks())) {
    checks[name] = await Promise.resolve()
      .then(check)
      .catch(() => false)
  }
  return { ready: !options.isShuttingDown() && Object.values(checks).every(Boolean), checks }
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthRouteOptions> = async (app, options) => {
  options.metrics.readinessFrom(async () => (await readiness(options)).ready)
  app.get(
    '/healthz',
    {
      config: { kind: 'health' },
      schema: {
        summary: 'Liveness',
        operationId: 'healthz',
        tags: ['operations'],
        response: { 200: described(HealthResponse, 'The process answers.') },
        'x-examples': () => ({ responses: { 200: { status: 'healthy', timestamp: 1795272943.268 } } }),
      },
    },
    async () => ({ status: 'healthy', timestamp: Date.now() / 1000 }),
  )

  app.get(
    '/readyz',
    {
      config: { kind: 'health' },
      schema: {
        summary: 'Readiness',
        operationId: 'readyz',
        tags: ['operations'],
        description: `503 with status "not_ready" when a check fails, and from the start of a shutdown. Checks: ${Object.keys(options.checks()).join(', ')}.`,
        response: {
          200: described(ReadinessResponse, 'Every check holds.'),
          503: described(ReadinessResponse, 'A check failed or the service is shutting down.'),
        },
        'x-examples': () => ({
          responses: {
            200: { status: 'ready', timestamp: 1795272943.268, checks: { algorithm: true, store: true } },
            503: {
              status: 'not_ready',
              timestamp: 1795272943.268,
              checks: { algorithm: true, store: false },
            },
          },
        }),
      },
    },
    async (_request, reply) => {
      const { ready, checks } = await readiness(options)
      reply.code(ready ? 200 : 503)
      const body = { status: ready ? 'ready' : 'not_ready', timestamp: Date.now() / 1000, checks }
      return options.algorithms === undefined ? body : { ...body, algorithms: options.algorithms }
    },
  )
}

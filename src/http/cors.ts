// Opt-in CORS (ALGOSERVE_CORS_ORIGINS): browsers on the listed origins may call the API, preflights
// are answered, and the headers a client needs to read are exposed.
import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import type { RouteDeclarations } from './route-declaration.js'

export async function registerCors(
  app: FastifyInstance,
  declarations: RouteDeclarations,
  origins: readonly string[],
): Promise<void> {
  // The plugin's one route (OPTIONS *) takes the preflights: no key, no rate limit.
  await declarations.registering({ kind: 'preflight' }, () =>
    app.register(cors, {
      origin: origins.includes('*') ? '*' : [...origins],
      methods: ['GET', 'POST', 'OPTIONS'],
      allowedHeaders: ['authorization', 'content-type', 'x-request-id', 'idempotency-key'],
      exposedHeaders: [
        'x-request-id',
        'retry-after',
        'www-authenticate',
        'idempotent-replayed',
        'algorithm-version',
        'deprecation',
        'sunset',
      ],
      maxAge: 600,
    }),
  )
}

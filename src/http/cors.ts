// Opt-in CORS (ALGOSERVE_CORS_ORIGINS): browsers on the listed origins may call the API, preflights
// are answered, and the headers a client needs to read are exposed.
import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'

export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  await app.register(cors, {
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'x-request-id', 'idempotency-key'],
    exposedHeaders: ['x-request-id', 'retry-after', 'www-authenticate', 'idempotent-replayed'],
    maxAge: 600,
  })
}

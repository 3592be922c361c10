// Opt-in rate limits per client (ALGOSERVE_RATE_LIMIT) on the API routes (api-paths.ts): the client
// is its API key when keys are on, otherwise its address. Over the limit: 429 RATE_LIMITED with
// Retry-After, in the route's error shape. Health, readiness, metrics and the documentation are exempt.
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { RateLimitedError } from '../errors.js'
import { authenticatedClient } from './api-keys.js'
import { isApiPath } from './api-paths.js'

export interface RateLimitOptions {
  rateLimit: number
  rateLimitWindowMs: number
}

const isApiRoute = (request: FastifyRequest) => isApiPath(request.routeOptions.url ?? '')

export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  const { rateLimit: max, rateLimitWindowMs: timeWindow } = options
  await app.register(rateLimit, {
    global: true,
    max,
    timeWindow,
    allowList: (request) => !isApiRoute(request) || request.method === 'OPTIONS',
    keyGenerator: (request) => {
      const client = authenticatedClient(request)
      return client === undefined ? `address:${request.ip}` : `key:${client}`
    },
    errorResponseBuilder: (_request, context) =>
      new RateLimitedError(max, timeWindow, Math.max(1, Math.ceil(context.ttl / 1000))),
  })
}

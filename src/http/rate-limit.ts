// Opt-in rate limits per client (ALGOSERVE_RATE_LIMIT) on the routes declared as the API
// (route-declaration.ts): the client is its API key when keys are on, otherwise its address. Over the
// limit: 429 RATE_LIMITED with Retry-After, in the route's error shape. Every other route (health,
// metrics, the documentation, the dashboard, preflights) gets no limiter at all.
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import { RateLimitedError } from '../errors.js'
import { authenticatedClient } from './api-keys.js'
import { isRateLimited } from './route-declaration.js'

export interface RateLimitOptions {
  rateLimit: number
  rateLimitWindowMs: number
}

export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  const { rateLimit: max, rateLimitWindowMs: timeWindow } = options
  // Before the plugin's own hook, which adds the limiter to each route whose config does not say false.
  app.addHook('onRoute', (route) => {
    if (route.config !== undefined && !isRateLimited(route.config)) route.config.rateLimit = false
  })
  await app.register(rateLimit, {
    global: true,
    max,
    timeWindow,
    keyGenerator: (request) => {
      const client = authenticatedClient(request)
      return client === undefined ? `address:${request.ip}` : `key:${client}`
    },
    errorResponseBuilder: (_request, context) =>
      new RateLimitedError(max, timeWindow, Math.max(1, Math.ceil(context.ttl / 1000))),
  })
}

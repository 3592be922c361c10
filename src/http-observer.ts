// What every HTTP request gets besides its route: its request id (header included), the HTTP metrics,
// and during a shutdown `connection: close`.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { type Metrics, UNMATCHED_ENDPOINT } from './metrics.js'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Fastify's genReqId: the client's x-request-id when it is well formed, otherwise a fresh UUID v4. */
export function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
}

export function observeRequests(app: FastifyInstance, metrics: Metrics, isShuttingDown: () => boolean): void {
  const { httpRequests, httpDuration, httpInProgress } = metrics
  // Label lookups hash their labels; the few children there are are kept at hand instead.
  const counters = new Map<string, ReturnType<typeof httpRequests.labels>>()
  const histograms = new Map<string, ReturnType<typeof httpDuration.labels>>()

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    // Kept-alive clients are told to reconnect, perhaps to another instance.
    if (isShuttingDown()) reply.header('connection', 'close')
    httpInProgress.inc()
    // 'close' follows every response, answered or abandoned.
    reply.raw.once('close', () => httpInProgress.dec())
    done()
  })

  app.addHook('onResponse', (request, reply, done) => {
    const endpoint = request.routeOptions.url?.replace(/:([^/]+)/g, '{$1}') ?? UNMATCHED_ENDPOINT
    const route = `${request.method} ${endpoint}`
    const key = `${route} ${reply.statusCode}`
    let counter = counters.get(key)
    if (counter === undefined) {
      counter = httpRequests.labels({ method: request.method, endpoint, status: reply.statusCode })
      counters.set(key, counter)
    }
    let histogram = histograms.get(route)
    if (histogram === undefined) {
      histogram = httpDuration.labels({ method: request.method, endpoint })
      histograms.set(route, histogram)
    }
    counter.inc()
    histogram.observe(reply.elapsedTime / 1000)
    done()
  })
}

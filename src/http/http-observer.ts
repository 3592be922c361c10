// What every HTTP request gets besides its route: its request id (header included), the HTTP metrics,
// and during a shutdown `connection: close`.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { type Metrics, UNMATCHED_ENDPOINT } from '../metrics/metrics.js'

/** A client's x-request-id that is kept; any other is replaced. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Fastify's genReqId: the client's x-request-id when it is well formed, otherwise a fresh id. */
export function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : freshRequestId()
}

/**
 * A fresh request id: a random UUID v4, as the contract says. A counter behind a per-process random
 * prefix was measured as no cheaper (docs/benchmarks/invoke.md) and is not a v4 UUID's random draw.
 */
export function freshRequestId(): string {
  return randomUUID()
}

export function observeRequests(app: FastifyInstance, metrics: Metrics, isShuttingDown: () => boolean): void {
  const { httpInProgress } = metrics
  const requestEnded = () => httpInProgress.dec()

  app.addHook('onRequest', function observeRequest(request, reply, done) {
    reply.header('x-request-id', request.id)
    // Kept-alive clients are told to reconnect, perhaps to another instance.
    if (isShuttingDown()) reply.header('connection', 'close')
    httpInProgress.inc()
    // 'close' follows every response, answered or abandoned.
    reply.raw.on('close', requestEnded)
    done()
  })

  // Each route gets its own hook, made when the route is declared, with its label already written as
  // the interface wants it: /jobs/:job_id becomes /jobs/{job_id}.
  app.addHook('onRoute', (route: RouteOptions) => {
    const hooks = route.onResponse === undefined ? [] : [route.onResponse].flat()
    const methods = [route.method].flat()
    const count = endpointObserver(
      metrics,
      route.url.replace(/:([^/]+)/g, '{$1}'),
      methods.length === 1 ? methods[0] : undefined,
    )
    route.onResponse = [
      ...hooks,
      function countAnswer(request, reply, done) {
        count(request, reply)
        done()
      },
    ]
  })
  // Requests that matched no route (404, 405) only pass the global hooks.
  const countUnmatched = endpointObserver(metrics, UNMATCHED_ENDPOINT)
  app.addHook('onResponse', function countUnmatchedAnswer(request, reply, done) {
    if (request.is404) countUnmatched(request, reply)
    done()
  })
}

/**
 * Counts the answers of one endpoint. The label children are looked up once per method and status:
 * working out the labels on every request (the route getter, the template rewrite, the label hash) showed
 * in profiles, and resolving them once, with one shared 'close' listener, gave the small-prime /invoke
 * about 9% more throughput (docs/benchmarks/invoke.md). A route of one method (`method`) has its
 * method's children bound when it is declared, so that a request looks up its status alone.
 */
export function endpointObserver(
  metrics: Metrics,
  endpoint: string,
  method?: string,
): (request: FastifyRequest, reply: FastifyReply) => void {
  const { httpRequests, httpDuration } = metrics
  // A series is made at its first answer: /metrics lists no endpoint before it has been called.
  const seriesOf = (method: string): MethodSeries => {
    let duration: { observe(seconds: number): void } | undefined
    const byStatus = new Map<number, { inc(): void }>()
    return (reply) => {
      const status = reply.statusCode
      let counter = byStatus.get(status)
      if (counter === undefined) {
        counter = httpRequests.labels({ method, endpoint, status })
        byStatus.set(status, counter)
      }
      counter.inc()
      duration ??= httpDuration.labels({ method, endpoint })
      duration.observe(reply.elapsedTime / 1000)
    }
  }
  if (method !== undefined) {
    const count = seriesOf(method)
    return (_request, reply) => count(reply)
  }
  const byMethod = new Map<string, MethodSeries>()
  return (request, reply) => {
    let count = byMethod.get(request.method)
    if (count === undefined) {
      count = seriesOf(request.method)
      byMethod.set(request.method, count)
    }
    count(reply)
  }
}

/** Counts one answer of one method of an endpoint. */
type MethodSeries = (reply: FastifyReply) => void

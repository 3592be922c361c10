// What every HTTP request gets before Fastify sees it and after its answer is written: its request id
// (header included), the HTTP metrics, and during a shutdown `connection: close`. Done on Node's own
// request and response objects: as Fastify hooks the same work cost a quarter of /invoke's throughput
// (BENCHMARKS.md).
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type Metrics, UNMATCHED_ENDPOINT } from './metrics.js'
import type { RouteTable } from './route-table.js'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const ID = Symbol('algoserve.requestId')

type Request = IncomingMessage & { [ID]?: string }

/** The client's x-request-id when it is well formed, otherwise a fresh UUID v4. */
function makeRequestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
}

/** Fastify's genReqId: the id this observer gave the request. */
export function requestIdOf(request: IncomingMessage): string {
  return (request as Request)[ID] ?? makeRequestId(request)
}

export function httpObserver(
  metrics: Metrics,
  routes: RouteTable,
  isShuttingDown: () => boolean,
): (request: IncomingMessage, response: ServerResponse) => void {
  const { httpRequests, httpDuration, httpInProgress } = metrics
  // Label lookups hash their labels; the few children there are are kept at hand instead.
  const counters = new Map<string, ReturnType<typeof httpRequests.labels>>()
  const histograms = new Map<string, ReturnType<typeof httpDuration.labels>>()

  const record = (method: string, url: string, status: number, seconds: number) => {
    const endpoint = routes.template(method, url) ?? UNMATCHED_ENDPOINT
    const route = `${method} ${endpoint}`
    const key = `${route} ${status}`
    let counter = counters.get(key)
    if (counter === undefined) {
      counter = httpRequests.labels({ method, endpoint, status })
      counters.set(key, counter)
    }
    let histogram = histograms.get(route)
    if (histogram === undefined) {
      histogram = httpDuration.labels({ method, endpoint })
      histograms.set(route, histogram)
    }
    counter.inc()
    histogram.observe(seconds)
  }

  return (request, response) => {
    const start = performance.now()
    const id = makeRequestId(request)
    ;(request as Request)[ID] = id
    response.setHeader('x-request-id', id)
    // Kept-alive clients are told to reconnect, perhaps to another instance.
    if (isShuttingDown()) response.setHeader('connection', 'close')
    httpInProgress.inc()
    // 'close' follows every response, answered or abandoned; only answered ones are counted.
    response.once('close', () => {
      httpInProgress.dec()
      if (response.writableFinished) {
        record(
          request.method ?? 'GET',
          request.url ?? '/',
          response.statusCode,
          (performance.now() - start) / 1000,
        )
      }
    })
  }
}

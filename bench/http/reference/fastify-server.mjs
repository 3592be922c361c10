// A reference point for bench/http/wrk/invoke-ladder.sh: Fastify 5 with only what LEVEL adds, answering
// POST /invoke with a fixed body of the service's shape, so that the ladder shows what the framework costs
// by itself.
//   LEVEL=1  Fastify, one route, its default JSON body parser, no logger
//   LEVEL=2  the same plus what every request of the service gets before any of its own work: pino with one
//            JSON access line per request (asynchronous destination), a UUID request id echoed in a header
//   LEVEL=3  less than any server of the contract does per request, each part in its cheapest form on this
//            stack: a UUID request id echoed in a header, the body checked against a schema (Fastify's
//            default Ajv after JSON.parse), the answer serialised from a schema, and the two HTTP metrics (a
//            prom-client counter and histogram). No access line, no lossless JSON, no algorithm, and no
//            per-request logger (requests log through the root logger, so their lines would not even carry
//            the id)
// Usage: LEVEL=1 node bench/http/reference/fastify-server.mjs PORT
import { randomUUID } from 'node:crypto'
import Fastify, { LogController } from 'fastify'
import pino from 'pino'
import { Counter, Histogram, Registry } from 'prom-client'

const level = Number(process.env.LEVEL ?? 1)
const port = Number(process.argv[2])
const ANSWER = {
  status: 'success',
  result: {
    number: 97,
    is_prime: true,
    factors: [],
    factorization_complete: true,
    algorithm: 'trial_division',
  },
  metadata: { algorithm: 'PrimeChecker', version: '1.0.0', elapsed_time: 0.0001 },
}

class AccessLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' })
  }
  incomingRequest() {}
  requestCompleted(_error, request, reply) {
    request.log.info(
      { method: request.method, url: request.url, status: reply.statusCode, duration_ms: reply.elapsedTime },
      'request completed',
    )
  }
}

class NoRequestLines extends LogController {
  incomingRequest() {}
  requestCompleted() {}
}

const app = Fastify(
  level >= 2
    ? {
        logger: { level: 'info', stream: pino.destination({ dest: 1, sync: false, minLength: 4096 }) },
        genReqId: () => randomUUID(),
        logController: level === 2 ? new AccessLog() : new NoRequestLines(),
        childLoggerFactory: level === 2 ? undefined : (logger) => logger,
      }
    : { logger: false },
)
if (level >= 2) {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
}
if (level === 3) {
  const registers = [new Registry()]
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'h',
    labelNames: ['method', 'endpoint', 'status'],
    registers,
  })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'h',
    labelNames: ['method', 'endpoint'],
    registers,
  })
  const counted = requests.labels({ method: 'POST', endpoint: '/invoke', status: 200 })
  const timed = duration.labels({ method: 'POST', endpoint: '/invoke' })
  app.addHook('onResponse', (_request, reply, done) => {
    counted.inc()
    timed.observe(reply.elapsedTime / 1000)
    done()
  })
}
const integer = { anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^-?[0-9]+$' }] }
const schema =
  level === 3
    ? {
        body: { type: 'object', required: ['number'], properties: { number: integer } },
        response: {
          200: {
            type: 'object',
            properties: {
              request_id: { type: 'string' },
              status: { type: 'string' },
              result: {
                type: 'object',
                properties: {
                  number: { type: 'integer' },
                  is_prime: { type: 'boolean' },
                  factors: { type: 'array', items: { type: 'integer' } },
                  factorization_complete: { type: 'boolean' },
                  algorithm: { type: 'string' },
                },
              },
              metadata: {
                type: 'object',
                properties: {
                  algorithm: { type: 'string' },
                  version: { type: 'string' },
                  elapsed_time: { type: 'number' },
                },
              },
            },
          },
        },
      }
    : undefined
app.post('/invoke', { schema }, async (request) => ({ request_id: request.id, ...ANSWER }))
await app.listen({ host: '127.0.0.1', port })

// A reference point for bench/invoke-ladder.sh: Fastify 5 with only what LEVEL adds, answering POST /invoke
// with a fixed body of the service's shape, so that the ladder shows what the framework costs by itself.
//   LEVEL=1  Fastify, one route, its default JSON body parser, no logger
//   LEVEL=2  the same plus what every request of the service gets before any of its own work: pino with one
//            JSON access line per request (asynchronous destination), a UUID request id echoed in a header
// Usage: LEVEL=1 node bench/fastify-server.mjs PORT
import { randomUUID } from 'node:crypto'
import Fastify, { LogController } from 'fastify'
import pino from 'pino'

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

const app = Fastify(
  level >= 2
    ? {
        logger: { level: 'info', stream: pino.destination({ dest: 1, sync: false, minLength: 4096 }) },
        genReqId: () => randomUUID(),
        logController: new AccessLog(),
      }
    : { logger: false },
)
if (level >= 2) {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
}
app.post('/invoke', async (request) => ({ request_id: request.id, ...ANSWER }))
await app.listen({ host: '127.0.0.1', port })

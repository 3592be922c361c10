// One budget for the request-body bytes held at once over all requests. Each body is buffered whole
// before it is parsed, so without it a thousand clients that send most of a body and then stall hold a
// thousand bodies; with it, a body that would go over the budget is refused with 503 and Retry-After.
import { Transform, type TransformCallback } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { ServiceUnavailableError } from '../errors.js'

export function limitBufferedBodies(app: FastifyInstance, maxBytes: number): void {
  let held = 0
  app.addHook('preParsing', (request, reply, payload, done) => {
    const { headers } = request
    if (headers['transfer-encoding'] === undefined && (headers['content-length'] ?? '0') === '0') {
      done(null, payload)
      return
    }
    let mine = 0
    // Given back when the exchange ends, answered or abandoned: by then the body is no longer held.
    reply.raw.once('close', () => {
      held -= mine
      mine = 0
    })
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        if (held + chunk.length > maxBytes) {
          callback(new ServiceUnavailableError('Too many request bodies are in transit; try again later.', 1))
          return
        }
        held += chunk.length
        mine += chunk.length
        callback(null, chunk)
      },
    })
    done(null, payload.pipe(counter))
  })
}

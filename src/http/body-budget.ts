// One budget for the request-body bytes held at once over all requests. Each body is buffered whole
// before it is parsed, so without it a thousand clients that send most of a body and then stall hold a
// thousand bodies; with it, a body that would go over the budget is refused with 503 and Retry-After.
import type { ServerResponse } from 'node:http'
import { Transform, type TransformCallback } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { ServiceUnavailableError } from '../errors.js'

const overBudget = () =>
  new ServiceUnavailableError('Too many request bodies are in transit; try again later.', 1)

/** The bytes a response's request holds of the budget until the exchange ends. */
const HOLDS = Symbol('body bytes held')
type Holding = ServerResponse & { [HOLDS]?: number }

export function limitBufferedBodies(app: FastifyInstance, maxBytes: number, bodyLimit: number): void {
  let held = 0
  // One listener shared by every response: a closure and a once() wrapper per request showed in profiles.
  function giveBack(this: Holding) {
    held -= this[HOLDS] ?? 0
  }
  app.addHook('preParsing', function reserveBodyBytes(request, reply, payload, done) {
    const { headers } = request
    if (headers['transfer-encoding'] === undefined) {
      const declared = Number(headers['content-length'] ?? '0')
      // Nothing to hold; or over the body limit, which Fastify refuses (413) without reading it.
      if (!(declared > 0 && declared <= bodyLimit)) {
        done(null, payload)
        return
      }
      // A declared length is taken from the budget whole, before a byte is read: a stream per request
      // to count its chunks cost the common small body more than the rest of its parsing.
      if (held + declared > maxBytes) {
        done(overBudget())
        return
      }
      held += declared
      // Given back when the exchange ends, answered or abandoned: by then the body is no longer held.
      ;(reply.raw as Holding)[HOLDS] = declared
      reply.raw.on('close', giveBack)
      done(null, payload)
      return
    }
    // A chunked body's length is known only as it comes: counted chunk by chunk.
    let mine = 0
    reply.raw.once('close', () => {
      held -= mine
      mine = 0
    })
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        if (held + chunk.length > maxBytes) {
          callback(overBudget())
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

// Requests refused by node:http before Fastify sees them (bad framing or header bytes, headers too
// large, a request that took too long, an Expect header it cannot meet) still get the contract's flat
// error body and an x-request-id, wherever an HTTP answer can still be written.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { freshRequestId, requestId } from './http-observer.js'

interface Refusal {
  status: number
  code: string
  message: string
}

function refusalOf(error: NodeJS.ErrnoException): Refusal {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'REQUEST_TIMEOUT', message: 'The request was not received in time.' }
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
        message: 'The request headers are too large.',
      }
    default:
      return { status: 400, code: 'VALIDATION_ERROR', message: 'The HTTP request is malformed.' }
  }
}

function errorBody(refusal: Refusal, id: string): string {
  return JSON.stringify({ error: refusal.code, message: refusal.message, details: null, request_id: id })
}

/** Fastify's `clientErrorHandler`: answers in the contract's shape, then closes the connection. */
export function clientErrorHandler(log: () => FastifyBaseLogger) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const refusal = refusalOf(error)
    const id = freshRequestId()
    log().info({ reqId: id, err: { code: error.code, message: error.message } }, 'request refused')
    // As node:http itself does: nothing is written into a response that has begun.
    const inProgress = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage
    if (socket.writable && (inProgress === undefined || inProgress === null || !inProgress.headersSent)) {
      const body = errorBody(refusal, id)
      socket.write(
        `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${id}\r\nConnection: close\r\n\r\n${body}`,
      )
    }
    socket.destroy()
  }
}

/** The server's 'checkExpectation' listener: an Expect other than 100-continue is a 417. */
export function expectationFailed(request: IncomingMessage, response: ServerResponse): void {
  const id = requestId(request)
  const body = errorBody(
    { status: 417, code: 'EXPECTATION_FAILED', message: 'Only "Expect: 100-continue" is supported.' },
    id,
  )
  response.shouldKeepAlive = false
  response.writeHead(417, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': id,
  })
  response.end(body)
}

// A real HTTP receiver for webhooks on a loopback port: answers each request as the test says
// (a status code, now or after a while, never, or by closing the connection) and records what it was
// sent and the most requests it held at once.
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  at: number
}

/**
 * What to answer to the n-th request (0-based): a status code, the same `after` some ms or once a promise
 * settles, 'hang' to never answer, or 'close' to close the connection without an answer.
 */
export type Answer = (
  n: number,
  received: Received,
) => number | { status: number; after: number | Promise<unknown> } | 'hang' | 'close'

export interface Receiver {
  url: string
  received: Received[]
  /** The most requests it held unanswered at once. */
  readonly mostInFlight: number
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver(answer: Answer = () => 204, host = '127.0.0.1'): Promise<Receiver> {
  const received: Received[] = []
  const hanging: ServerResponse[] = []
  const waiters: (() => void)[] = []
  let inFlight = 0
  let mostInFlight = 0
  const server: Server = createServer((request, response) => {
    inFlight++
    mostInFlight = Math.max(mostInFlight, inFlight)
    response.on('close', () => inFlight--)
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => {
      body += chunk
    })
    request.on('end', () => {
      const entry = { headers: request.headers, body, at: Date.now() }
      const reply = answer(received.length, entry)
      received.push(entry)
      for (const wake of waiters.splice(0)) wake()
      if (reply === 'hang') {
        hanging.push(response)
        return
      }
      if (reply === 'close') {
        request.socket.destroy()
        return
      }
      const send = (status: number) =>
        response.writeHead(status, status >= 300 && status < 400 ? { location: '/elsewhere' } : {}).end()
      if (typeof reply === 'number') send(reply)
      else if (typeof reply.after === 'number') setTimeout(() => send(reply.status), reply.after)
      else void reply.after.finally(() => send(reply.status))
    })
  })
  server.listen(0, host)
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host}:${port}/hook`,
    received,
    get mostInFlight() {
      return mostInFlight
    },
    async waitFor(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`${received.length} of ${count} webhook requests arrived in time`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left)
          waiters.push(() => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
      return received.slice(0, count)
    },
    async close() {
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}

/** The arrival times of each delivery's attempts, by webhook-id. */
export function byDelivery(received: Received[]): Map<string, number[]> {
  const attempts = new Map<string, number[]>()
  for (const r of received) {
    const id = String(r.headers['webhook-id'])
    attempts.set(id, [...(attempts.get(id) ?? []), r.at])
  }
  return attempts
}

// HTTP exchanges that fetch cannot make: bytes written to a socket as they are, the answer read back
// until the server closes the connection or `timeoutMs` passes.
import { connect } from 'node:net'

export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
  /** Milliseconds from connecting to the server closing the connection (or to the timeout). */
  closedAfterMs: number
  closed: boolean
}

export function rawExchange(url: string, request: string | Buffer, timeoutMs = 5000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    let closed = false
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve(parseAnswer(Buffer.concat(chunks).toString('latin1'), Date.now() - started, closed))
    }
    const timer = setTimeout(finish, timeoutMs)
    socket.on('connect', () => socket.write(request))
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code === 'ECONNRESET') {
        closed = true
        finish()
      } else reject(error)
    })
    socket.on('end', () => {
      closed = true
      finish()
    })
  })
}

function parseAnswer(text: string, closedAfterMs: number, closed: boolean): RawAnswer {
  const split = text.indexOf('\r\n\r\n')
  const head = split === -1 ? text : text.slice(0, split)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return {
    status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0),
    headers,
    body: split === -1 ? '' : text.slice(split + 4),
    closedAfterMs,
    closed,
  }
}

// A real TCP relay in front of a local server, for tests that must see, slow down or cut what passes:
// the network between a client and the service, or between the service and Redis.
import { createConnection, createServer, type Socket } from 'node:net'

export interface RelayHooks {
  /** How long connection `n` (0 for the first) waits before it reaches the upstream; none by default. */
  holdMs?: (n: number) => number
  /** Each chunk a client sends on connection `n`, before it is passed on. */
  onClientData?: (n: number, chunk: Buffer) => void
  /** Each chunk the upstream sends, after it is passed on; `cut` destroys both ends of the connection. */
  onUpstreamData?: (chunk: Buffer, cut: () => void) => void
}

export interface TcpRelay {
  port: number
  close(): Promise<void>
}

/** Relays every connection on a free port to `port` on 127.0.0.1. */
export async function tcpRelay(port: number, hooks: RelayHooks = {}): Promise<TcpRelay> {
  let accepted = 0
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
  }
  const server = createServer((client) => {
    const n = accepted++
    track(client)
    client.pause()
    const connect = () => {
      if (client.destroyed) return
      const upstream = createConnection({ port, host: '127.0.0.1' })
      track(upstream)
      const cut = () => {
        client.destroy()
        upstream.destroy()
      }
      client.on('data', (chunk: Buffer) => {
        hooks.onClientData?.(n, chunk)
        upstream.write(chunk)
      })
      upstream.on('data', (chunk: Buffer) => {
        client.write(chunk)
        hooks.onUpstreamData?.(chunk, cut)
      })
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
      client.resume()
    }
    const held = hooks.holdMs?.(n) ?? 0
    if (held > 0) setTimeout(connect, held)
    else connect()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address !== 'object') throw new Error('the relay has no port')
  return {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

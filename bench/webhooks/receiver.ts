// A webhook receiver for bench/webhooks/webhooks.ts, in a process of its own so that it does not share
// an event loop with the poster or the service. KIND `ok` answers 204 after LATENCY_MS, `error` answers
// 500 at once, `blackhole` reads each request and never answers. It prints {"port"} on stdout once
// listening; over IPC, `count` answers the webhooks received (distinct webhook ids) and their attempts and
// `report` every webhook's job end, first arrival and attempts' arrivals, and the most requests in flight at
// once.
//
//   node --import tsx bench/webhooks/receiver.ts   (KIND=ok LATENCY_MS=0; started by webhooks.ts)
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceiverReport {
  /** Per webhook: the job's completed_at, then the arrival of each attempt (unix ms). */
  webhooks: number[][]
  most: number
}

const KIND = process.env.KIND ?? 'ok'
const LATENCY_MS = Number(process.env.LATENCY_MS ?? 0)

const webhooks = new Map<string, number[]>()
let attempts = 0
let inFlight = 0
let most = 0

const server = createServer((request, response) => {
  inFlight++
  if (inFlight > most) most = inFlight
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const at = Date.now()
    attempts++
    const id = request.headers['webhook-id'] as string
    const seen = webhooks.get(id)
    if (seen === undefined) {
      const { completed_at } = JSON.parse(Buffer.concat(chunks).toString()) as { completed_at: string }
      webhooks.set(id, [Date.parse(completed_at), at])
    } else seen.push(at)
    if (KIND === 'blackhole') return
    const answer = () => {
      inFlight--
      response.writeHead(KIND === 'error' ? 500 : 204).end()
    }
    if (LATENCY_MS > 0) setTimeout(answer, LATENCY_MS)
    else answer()
  })
})
server.keepAliveTimeout = 60_000
// A black hole holds its requests for as long as the run lasts.
server.requestTimeout = 0
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`)
})

process.on('message', (message: string) => {
  if (message === 'count') process.send?.({ webhooks: webhooks.size, attempts })
  else if (message === 'report') {
    const report: ReceiverReport = { webhooks: [...webhooks.values()], most }
    process.send?.(report, () => process.exit(0))
  }
})
process.on('disconnect', () => process.exit(0))

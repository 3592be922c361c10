// The client of bench/webhooks/webhooks.ts, in a process of its own: POST /jobs to API at RATE a second
// for DURATION seconds, each job with the webhook HOOK; EXTRA (a JSON array of URLs) adds EXTRA_JOBS jobs
// for each of those webhooks, spread over the run. Open loop at a fixed rate: each tick sends the jobs
// due by then counted from the start, so a late tick catches up and the rate does not drift. It prints
// one JSON line at the end: the jobs answered 202 and not, per webhook, the seconds the posting took and
// the most a tick fell behind its schedule.
//
//   node --import tsx bench/webhooks/poster.ts   (started by webhooks.ts)
import { setTimeout as sleep } from 'node:timers/promises'
import { type Dispatcher, Pool } from 'undici'

export interface PosterReport {
  accepted: Record<string, number>
  refused: Record<string, number>
  seconds: number
  mostBehindMs: number
}

const API = process.env.API as string
const RATE = Number(process.env.RATE ?? 1000)
const DURATION_S = Number(process.env.DURATION ?? 10)
const HOOK = process.env.HOOK as string
const EXTRA = JSON.parse(process.env.EXTRA ?? '[]') as string[]
const EXTRA_JOBS = Number(process.env.EXTRA_JOBS ?? 0)

// Few connections, each pipelined: Fastify answers a connection's requests in order, and fewer
// sockets cost the service less than many.
const pool = new Pool(API, { connections: 8, pipelining: 16 })
const accepted: Record<string, number> = {}
const refused: Record<string, number> = {}
let answering = 0
let allAnswered: (() => void) | undefined

const headers = { 'content-type': 'application/json' }

function post(n: number, hook: string): void {
  answering++
  const body = `{"algorithm":"PrimeChecker","params":{"number":${n}},"webhook":"${hook}"}`
  let status = 0
  const done = (ok: boolean) => {
    const counts = ok ? accepted : refused
    counts[hook] = (counts[hook] ?? 0) + 1
    if (--answering === 0) allAnswered?.()
  }
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart: () => {},
    onResponseStart: (_controller, statusCode) => {
      status = statusCode
    },
    onResponseData: () => {},
    onResponseEnd: () => done(status === 202),
    onResponseError: () => done(false),
  }
  pool.dispatch({ path: '/jobs', method: 'POST', headers, body }, handler)
}

const total = RATE * DURATION_S
// When each extra job is due, as a number of main jobs sent before it.
const extras = EXTRA.flatMap((hook, i) =>
  Array.from({ length: EXTRA_JOBS }, (_, k) => ({
    before: Math.floor(((k + (i + 1) / (EXTRA.length + 1)) * total) / EXTRA_JOBS),
    hook,
  })),
).sort((a, b) => a.before - b.before)

const start = performance.now()
let mostBehindMs = 0
let sent = 0
let extra = 0
while (sent < total) {
  const elapsed = performance.now() - start
  const due = Math.min(total, Math.floor((elapsed / 1000) * RATE) + 1)
  mostBehindMs = Math.max(mostBehindMs, elapsed - (sent / RATE) * 1000)
  for (; sent < due; sent++) {
    for (; extra < extras.length && (extras[extra]?.before ?? total) <= sent; extra++) {
      post(total + extra, (extras[extra] as { hook: string }).hook)
    }
    post(sent, HOOK)
  }
  await sleep(1)
}
for (; extra < extras.length; extra++) post(total + extra, (extras[extra] as { hook: string }).hook)
if (answering > 0) await new Promise<void>((resolve) => (allAnswered = resolve))
const seconds = (performance.now() - start) / 1000
await pool.close()
const report: PosterReport = { accepted, refused, seconds, mostBehindMs: Math.round(mostBehindMs) }
process.stdout.write(`${JSON.stringify(report)}\n`)

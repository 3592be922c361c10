// The raw BullMQ baseline for bench/http/wrk/jobs.sh in Redis mode: on the same Redis, CLIENTS loops add an
// empty job and a Worker in this process (concurrency CONCURRENCY) completes it; no HTTP, no
// Algoserve. Reports jobs per second and the add-to-completion times from BullMQ's own timestamps,
// as bench/http/wrk/job-stats.mjs does for Algoserve's jobs.
// With a rate, adds are paced on a fixed schedule (open loop) at that many per second instead.
// Usage: node bench/http/reference/bullmq-raw.mjs <redis url> <seconds> [clients=16] [concurrency=1] [rate]
import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import { percentile } from '../../lib/stats.mjs'

const [url, seconds, clients = '16', concurrency = '1', rate = ''] = process.argv.slice(2)
const prefix = `raw${process.pid}`
const connection = () => new Redis(url, { maxRetriesPerRequest: null })
const queue = new Queue('raw', { connection: connection(), prefix })
const times = []
const worker = new Worker('raw', async () => null, {
  connection: connection(),
  prefix,
  concurrency: Number(concurrency),
})
worker.on('completed', (job) => times.push([job.timestamp, job.finishedOn]))
await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()])

const until = Date.now() + Number(seconds) * 1000
let added = 0
const add = () => queue.add('raw', {}, { removeOnComplete: { age: 600 } }).then(() => added++)
if (rate === '') {
  await Promise.all(
    Array.from({ length: Number(clients) }, async () => {
      while (Date.now() < until) await add()
    }),
  )
} else {
  const start = Date.now()
  const adds = []
  for (let due = 0; Date.now() < until; ) {
    const owed = Math.floor(((Date.now() - start) * Number(rate)) / 1000)
    for (; due < owed; due++) adds.push(add())
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  await Promise.all(adds)
}
while (times.length < added) await new Promise((resolve) => setTimeout(resolve, 50))
const latencies = times.map(([created, finished]) => finished - created)
// Loops, not Math.max(...array): a spread of 50,000 arguments overflows the stack.
const span =
  (times.reduce((m, t) => Math.max(m, t[1]), 0) - times.reduce((m, t) => Math.min(m, t[0]), Infinity)) / 1000
console.log(
  JSON.stringify({
    jobs: times.length,
    span_s: Number(span.toFixed(2)),
    jobs_per_s: Math.round(times.length / span),
    p50_ms: percentile(latencies, 0.5),
    p99_ms: percentile(latencies, 0.99),
  }),
)
await worker.close()
await queue.obliterate({ force: true })
await queue.close()
process.exit(0)

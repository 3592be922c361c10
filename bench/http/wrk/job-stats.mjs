// Reads jobs back over HTTP and reports throughput and creation-to-completion times from their own
// timestamps. With `--post N --number X` it first creates N jobs itself (for slow jobs, where wrk's
// open loop would only build a backlog).
// With TIMELINE_MS=<ms>, also prints to stderr, per slice of that length of creation time, how many jobs
// were created, their median and worst creation-to-completion times, and the longest wait before a start
// (where in a run its slow jobs were).
// Usage: node bench/http/wrk/job-stats.mjs <base url> <ids file or dir> [--post N --number X --concurrency C]
import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { percentile, upperMedian } from '../../lib/stats.mjs'

const [base, idsPath, ...rest] = process.argv.slice(2)
const option = (name, fallback) => {
  const at = rest.indexOf(`--${name}`)
  return at === -1 ? fallback : rest[at + 1]
}
const concurrency = Number(option('concurrency', '16'))

async function pool(items, work) {
  let next = 0
  const results = []
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++
        results[i] = await work(items[i])
      }
    }),
  )
  return results
}

const toPost = Number(option('post', '0'))
if (toPost > 0) {
  const body = `{"algorithm":"PrimeChecker","params":{"number":${option('number', '97')}}}`
  await pool(Array.from({ length: toPost }), async () => {
    const response = await fetch(`${base}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    const created = await response.json()
    if (response.status !== 202) throw new Error(`POST /jobs answered ${response.status}`)
    appendFileSync(idsPath, `${created.job_id}\n`)
  })
}

const files = statSync(idsPath).isDirectory()
  ? readdirSync(idsPath).map((name) => join(idsPath, name))
  : [idsPath]
const ids = files.flatMap((file) => readFileSync(file, 'utf8').split('\n').filter(Boolean))

// Wait until every job has ended, then read them all.
const read = (id) => fetch(`${base}/jobs/${id}`).then((r) => r.json())
let jobs
for (;;) {
  jobs = await pool(ids, read)
  if (jobs.every((job) => job.status === 'completed' || job.status === 'failed')) break
  await new Promise((resolve) => setTimeout(resolve, 500))
}

const created = jobs.map((job) => Date.parse(job.created_at))
const completed = jobs.map((job) => Date.parse(job.completed_at))
const latencies = jobs.map((_, i) => completed[i] - created[i]).sort((a, b) => a - b)
const spanS =
  (completed.reduce((m, t) => Math.max(m, t), 0) - created.reduce((m, t) => Math.min(m, t), Infinity)) / 1000
const failed = jobs.filter((job) => job.status !== 'completed').length
const slice = Number(process.env.TIMELINE_MS ?? 0)
if (slice > 0) {
  const first = created.reduce((m, t) => Math.min(m, t), Infinity)
  const slices = new Map()
  jobs.forEach((job, i) => {
    const at = Math.floor((created[i] - first) / slice)
    const entry = slices.get(at) ?? { times: [], wait: 0 }
    entry.times.push(completed[i] - created[i])
    entry.wait = Math.max(entry.wait, Date.parse(job.started_at) - created[i])
    slices.set(at, entry)
  })
  for (const [at, { times, wait }] of [...slices].sort((a, b) => a[0] - b[0])) {
    times.sort((a, b) => a - b)
    console.error(
      `created ${(at * slice) / 1000} s on: ${times.length} jobs, p50 ${upperMedian(times)} ms, ` +
        `max ${times.at(-1)} ms, longest wait to start ${wait} ms`,
    )
  }
}
console.log(
  JSON.stringify({
    jobs: jobs.length,
    failed,
    span_s: Number(spanS.toFixed(2)),
    jobs_per_s: Math.round(jobs.length / spanS),
    p50_ms: percentile(latencies, 0.5),
    p99_ms: percentile(latencies, 0.99),
    max_ms: latencies.at(-1),
  }),
)

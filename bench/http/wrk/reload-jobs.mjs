// The job half of bench/http/wrk/reload-under-load.sh: posts jobs of ALGORITHM at RATE a second for
// JOB_SECONDS (an open loop: a slow answer does not slow the schedule), then reads every job back until it
// has ended, and prints one line of JSON: how many were posted, answered 202 (and what the others got),
// completed, failed, lost (never ended, or gone), and run on another version than the one they were
// pinned to (the 202's Algorithm-Version header; without one, on a version that was never loaded).
// Usage: node bench/http/wrk/reload-jobs.mjs URL
//        (ALGORITHM=Sum RATE=500 JOB_SECONDS=30 VERSIONS=1.0.0,1.1.0)
const url = process.argv[2]
const algorithm = process.env.ALGORITHM ?? 'Sum'
const rate = Number(process.env.RATE ?? 500)
const seconds = Number(process.env.JOB_SECONDS ?? 30)
const versions = new Set((process.env.VERSIONS ?? '1.0.0,1.1.0').split(','))
const TICK_MS = 10

const posted = []
const body = JSON.stringify({ algorithm, params: { a: 1, b: 2 } })
async function post() {
  const entry = { id: null, status: 0, pinned: null }
  posted.push(entry)
  try {
    const response = await fetch(`${url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    entry.status = response.status
    entry.pinned = response.headers.get('algorithm-version')
    entry.id = (await response.json()).job_id ?? null
  } catch {
    entry.status = -1
  }
}

const sends = []
const started = Date.now()
let sent = 0
await new Promise((resolve) => {
  const timer = setInterval(() => {
    const due = Math.min(rate * seconds, Math.floor(((Date.now() - started) / 1000) * rate))
    for (; sent < due; sent++) sends.push(post())
    if (sent >= rate * seconds) {
      clearInterval(timer)
      resolve()
    }
  }, TICK_MS)
})
await Promise.all(sends)

const counts = { posted: posted.length, accepted: 0, completed: 0, failed: 0, lost: 0, misversioned: 0 }
const accepted = posted.filter((entry) => entry.status === 202 && entry.id !== null)
counts.accepted = accepted.length
const deadline = Date.now() + 120_000
// A few reads at once: the service is still running the last jobs.
const queue = [...accepted]
async function reader() {
  for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
    for (;;) {
      const response = await fetch(`${url}/jobs/${entry.id}?wait=5`)
      const job = response.status === 200 ? await response.json() : null
      if (job !== null && (job.status === 'completed' || job.status === 'failed')) {
        counts[job.status]++
        const version = job.metadata?.version
        const wrong = entry.pinned === null ? !versions.has(version) : version !== entry.pinned
        if (job.status === 'completed' && wrong) counts.misversioned++
        break
      }
      if (job === null || Date.now() > deadline) {
        counts.lost++
        break
      }
    }
  }
}
await Promise.all(Array.from({ length: 16 }, reader))
counts.pinned_by_header = accepted.filter((entry) => entry.pinned !== null).length
// What the posts that were not accepted got: a status, or -1 when the request itself failed.
counts.refused = {}
for (const { status } of posted)
  if (status !== 202) counts.refused[status] = (counts.refused[status] ?? 0) + 1
process.stdout.write(`${JSON.stringify(counts)}\n`)

// GET /jobs and GET /job-summary over HTTP with many jobs stored (the target: under 20 ms with
// 1,000,000 jobs embedded, 100,000 in Redis). The store is seeded directly (SQL inserts; BullMQ addBulk
// plus our sorted set), then a real service answers. Baseline in the same run: GET /jobs/{job_id} of
// one job. Prints the median and p95 of each request kind, in ms, and the ratio of medians to the
// baseline. Embedded, the data directory is written at schema 2 (before the summary's counters) and
// the upgrade that fills them is timed; EXPIRED more finished jobs are past the retention and left
// unswept (the sweeper is stopped), as up to one sweep interval's worth are between two sweeps.
// `node --import tsx bench/jobs/list.ts` (embedded, JOBS=1000000, EXPIRED=60000) or
// `BACKEND=redis node --import tsx bench/jobs/list.ts` (starts its own redis-server, JOBS=100000).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { defaultConfig } from '../../src/config.js'
import { webhookDelivery } from '../../src/jobs/embedded/dispatcher.js'
import { MIGRATIONS } from '../../src/jobs/embedded/migrations/index.js'
import { inTransaction, openConnection } from '../../src/jobs/embedded/sqlite-driver.js'
import { DATABASE_FILE, SqliteJobStore } from '../../src/jobs/embedded/sqlite-store.js'
import { createService } from '../../src/service.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { freshPrefix, startRedis } from '../lib/redis.js'
import { median, percentile } from '../lib/stats.js'

writeResultOnExit(
  'list',
  {
    title: 'GET /jobs and GET /job-summary with a million jobs stored',
    script: 'bench/jobs/list.ts',
    history: 'docs/benchmarks/job-control.md',
    command: 'node --import tsx bench/jobs/list.ts',
  },
  ['BACKEND', 'EXPIRED', 'JOBS', 'REQUESTS'],
)

const BACKEND = process.env.BACKEND ?? 'embedded'
const JOBS = Number(process.env.JOBS ?? (BACKEND === 'redis' ? 100_000 : 1_000_000))
const EXPIRED = BACKEND === 'redis' ? 0 : Number(process.env.EXPIRED ?? 60_000)
const REQUESTS = Number(process.env.REQUESTS ?? 200)
const TTL_MS = defaultConfig().jobTtlSeconds * 1000
const PARAMS = '{"number":97}'
const RESULT =
  '{"number":97,"is_prime":true,"factors":[],"factorization_complete":true,"algorithm":"trial_division"}'
const METADATA = '{"algorithm":"PrimeChecker","version":"1.0.0","elapsed_time":0.00001}'

const newId = () =>
  randomBytes(6)
    .toString('hex')
    .replace(/^[1-9]/, '0')

async function seedEmbedded(dataDir: string): Promise<string> {
  const db = openConnection(join(dataDir, DATABASE_FILE))
  db.exec(MIGRATIONS[0] as string)
  db.exec(MIGRATIONS[1] as string)
  db.exec('PRAGMA user_version = 2')
  const insert = db.prepare(
    `INSERT INTO jobs (id, algorithm, params, webhook, cheap, status, created_at, started_at, completed_at,
       result, metadata, runs) VALUES (?, 'PrimeChecker', ?, NULL, 1, ?, ?, ?, ?, ?, ?, 1)`,
  )
  const start = Date.now() - JOBS
  let last = ''
  for (let done = 0; done < JOBS; done += 50_000) {
    inTransaction(db, () => {
      for (let i = done; i < Math.min(JOBS, done + 50_000); i++) {
        const at = start + i
        // 1 in 100 pending, the rest completed.
        const pending = i % 100 === 0
        last = newId()
        insert.run(
          last,
          PARAMS,
          pending ? 'pending' : 'completed',
          at,
          pending ? null : at,
          pending ? null : at + 1,
          pending ? null : RESULT,
          pending ? null : METADATA,
        )
      }
    })
  }
  // Finished before the retention, older than every job above.
  inTransaction(db, () => {
    const end = Date.now() - TTL_MS - 1000
    for (let i = 0; i < EXPIRED; i++) {
      insert.run(newId(), PARAMS, 'completed', end - JOBS - i, end - i - 1, end - i, RESULT, METADATA)
    }
  })
  db.close()
  return last
}

async function seedRedis(url: string, prefix: string): Promise<string> {
  const connection = new Redis(url, { maxRetriesPerRequest: null })
  const queue = new Queue('jobs', { connection, prefix })
  const start = Date.now() - JOBS
  const LIMIT = 10 ** 15
  const invert = (hex: string) => [...hex].map((d) => (15 - Number.parseInt(d, 16)).toString(16)).join('')
  let last = ''
  for (let done = 0; done < JOBS; done += 1000) {
    const batch = Array.from({ length: Math.min(1000, JOBS - done) }, (_, k) => {
      last = newId()
      return { id: last, at: start + done + k }
    })
    await queue.addBulk(
      batch.map(({ id, at }) => ({
        name: 'PrimeChecker',
        data: { params: PARAMS, webhook: null, cheap: true },
        opts: { jobId: id, timestamp: at },
      })),
    )
    const members = batch.flatMap(({ id, at }) => [
      0,
      `${String(LIMIT - 1 - at).padStart(15, '0')}:${invert(id)}`,
    ])
    await connection.zadd(`${prefix}:algoserve:created`, ...(members as [number, string]))
  }
  await queue.close()
  connection.disconnect()
  return last
}

async function timed(url: string): Promise<number> {
  const started = performance.now()
  const response = await fetch(url)
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`)
  return performance.now() - started
}

const dataDir = mkdtempSync(join(tmpdir(), 'algoserve-bench-list-'))
const redis = BACKEND === 'redis' ? await startRedis() : undefined
const prefix = freshPrefix()
const seedStart = Date.now()
const lastId = redis === undefined ? await seedEmbedded(dataDir) : await seedRedis(redis.url, prefix)
console.log(
  `${BACKEND}: seeded ${JOBS} jobs (and ${EXPIRED} expired) in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`,
)
if (redis === undefined) {
  const upgradeStart = performance.now()
  const store = SqliteJobStore.open({
    dataDir,
    ttlMs: TTL_MS,
    maxPending: JOBS,
    makeDelivery: webhookDelivery,
  })
  console.log(
    `embedded: upgraded to the summary's counters in ${((performance.now() - upgradeStart) / 1000).toFixed(2)} s`,
  )
  await store.close()
}
const service = await createService({
  ...defaultConfig(),
  port: 0,
  dataDir,
  logLevel: 'silent',
  workerThreads: 1,
  redisUrl: redis?.url ?? null,
  redisPrefix: prefix,
})
// The expired jobs stay unswept for the whole run.
service.sweeper.stop()
await service.app.listen({ host: '127.0.0.1', port: 0 })
const address = service.app.server.address() as { port: number }
const base = `http://127.0.0.1:${address.port}`
// A cursor half way down the listing.
let deep = ''
{
  const page = (await (await fetch(`${base}/jobs?limit=500`)).json()) as { next_cursor: string }
  deep = page.next_cursor
}
// The summary counts every job but the expired ones.
{
  const { counts } = (await (await fetch(`${base}/job-summary`)).json()) as { counts: Record<string, number> }
  const pending = redis === undefined ? Math.ceil(JOBS / 100) : JOBS
  const want = { pending, running: 0, completed: JOBS - pending, failed: 0 }
  if (JSON.stringify(counts) !== JSON.stringify(want)) {
    throw new Error(`summary counts ${JSON.stringify(counts)}, not ${JSON.stringify(want)}`)
  }
}
const kinds: Record<string, string> = {
  'GET /jobs/{id} (baseline)': `${base}/jobs/${lastId}`,
  'GET /jobs?limit=50': `${base}/jobs?limit=50`,
  'GET /jobs?limit=50&cursor=(page 2 of 500s)': `${base}/jobs?limit=50&cursor=${deep}`,
  'GET /jobs?status=pending&limit=50': `${base}/jobs?status=pending&limit=50`,
  'GET /job-summary': `${base}/job-summary`,
}
if (redis === undefined)
  kinds['GET /jobs?status=completed&limit=50'] = `${base}/jobs?status=completed&limit=50`
for (const url of Object.values(kinds)) for (let i = 0; i < 20; i++) await timed(url)
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]))
// Interleaved, so that a busy machine slows every kind alike.
for (let i = 0; i < REQUESTS; i++) {
  for (const [kind, url] of Object.entries(kinds)) samples[kind]?.push(await timed(url))
}
const baseline = median(samples['GET /jobs/{id} (baseline)'] as number[])
for (const [kind, values] of Object.entries(samples)) {
  const p95 = percentile(values, 0.95)
  const m = median(values)
  console.log(
    `${kind.padEnd(44)} median ${m.toFixed(2)} ms  p95 ${p95.toFixed(2)} ms  ×${(m / baseline).toFixed(1)}`,
  )
}
await service.shutdown(0)
await redis?.close()
rmSync(dataDir, { recursive: true, force: true })

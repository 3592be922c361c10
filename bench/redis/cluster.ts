// Jobs end to end on a Redis Cluster of three primaries against one redis-server, in the same run: per
// topology one API process (`algoserve serve`) and one worker (`algoserve worker`), all started at once.
// ROUNDS rounds, alternating the topologies; in each, CLIENTS clients post JOBS small PrimeChecker jobs in
// all, one after another each, and every job is read back until it has ended. A round's rate is its jobs
// over the span from the first creation to the last end (the jobs' own times). Reports each round, the
// median rate per topology, and the Cluster's median over the standalone's.
//
//   npm run bench:cluster   (ROUNDS=5 JOBS=2000 CLIENTS=16)
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { sleep } from '../../test/helpers/time.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import {
  freshPrefix,
  type RedisCluster,
  type RedisServer,
  startRedis,
  startRedisCluster,
} from '../lib/redis.js'
import { freePort, startService } from '../lib/service.js'
import { upperMedian } from '../lib/stats.js'

writeResultOnExit(
  'cluster',
  {
    title: 'jobs end to end on a Redis Cluster against one server',
    script: 'bench/redis/cluster.ts',
    npm: 'npm run bench:cluster',
    history: 'docs/benchmarks/redis.md',
    command: 'npx tsx bench/redis/cluster.ts',
  },
  ['CLIENTS', 'JOBS', 'ROUNDS'],
)

const ROUNDS = Number(process.env.ROUNDS ?? 5)
const JOBS = Number(process.env.JOBS ?? 2000)
const CLIENTS = Number(process.env.CLIENTS ?? 16)

interface Topology {
  name: string
  env: Record<string, string>
  port: number
  children: ChildProcess[]
  rates: number[]
}

async function start(topology: Topology): Promise<void> {
  const env = { ALGOSERVE_LOG_LEVEL: 'warn', ...topology.env }
  const options = { from: 'src', env, timeoutMs: 120_000, everyMs: 200 } as const
  const started = await Promise.all([
    startService({ ...options, role: 'serve', port: topology.port }),
    startService({ ...options, role: 'worker' }),
  ])
  topology.children.push(...started.map(({ child }) => child))
}

async function round(topology: Topology): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${topology.port}`, { connections: CLIENTS })
  const ids: string[] = []
  let next = 0
  const post = async () => {
    while (next < JOBS) {
      const n = next++
      const answer = await pool.request({
        path: '/jobs',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ algorithm: 'PrimeChecker', params: { number: String(1000 + n) } }),
      })
      const body = (await answer.body.json()) as { job_id?: string }
      if (answer.statusCode === 202) ids.push(body.job_id as string)
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, post))
  let first = Number.POSITIVE_INFINITY
  let last = 0
  let at = 0
  const read = async () => {
    while (at < ids.length) {
      const id = ids[at++] as string
      for (;;) {
        const answer = await pool.request({ path: `/jobs/${id}`, method: 'GET' })
        const job = (await answer.body.json()) as { created_at: string; completed_at: string | null }
        if (job.completed_at !== null) {
          first = Math.min(first, Date.parse(job.created_at))
          last = Math.max(last, Date.parse(job.completed_at))
          break
        }
        await sleep(50)
      }
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, read))
  await pool.close()
  const rate = ids.length / ((last - first) / 1000)
  topology.rates.push(rate)
  console.log(JSON.stringify({ topology: topology.name, jobs: ids.length, 'jobs/s': Math.round(rate) }))
}

console.log(`ROUNDS=${ROUNDS} JOBS=${JOBS} CLIENTS=${CLIENTS} node ${process.version}`)
const dataDir = mkdtempSync(join(tmpdir(), 'algoserve-bench-'))
let standalone: RedisServer | undefined
let cluster: RedisCluster | undefined
const topologies: Topology[] = []
try {
  standalone = await startRedis()
  cluster = await startRedisCluster()
  const common = { ALGOSERVE_DATA_DIR: dataDir, ALGOSERVE_MAX_PENDING_JOBS: '10000000' }
  topologies.push(
    {
      name: 'standalone',
      env: { ...common, ALGOSERVE_REDIS_URL: standalone.url, ALGOSERVE_REDIS_PREFIX: freshPrefix() },
      port: await freePort(),
      children: [],
      rates: [],
    },
    {
      name: 'cluster',
      env: { ...common, ...cluster.env(`{${freshPrefix()}}`) },
      port: await freePort(),
      children: [],
      rates: [],
    },
  )
  await Promise.all(topologies.map(start))
  for (const topology of topologies) await round(topology)
  for (const topology of topologies) topology.rates.length = 0
  for (let r = 0; r < ROUNDS; r++) {
    for (const topology of topologies) await round(topology)
  }
  const [base, clustered] = topologies.map((topology) => upperMedian(topology.rates)) as [number, number]
  console.table(
    topologies.map((topology) => ({
      topology: topology.name,
      'median jobs/s': Math.round(upperMedian(topology.rates)),
      rounds: topology.rates.map(Math.round).join(' '),
    })),
  )
  console.log(`cluster / standalone: ${(clustered / base).toFixed(2)}`)
} finally {
  const children = topologies.flatMap((topology) => topology.children)
  for (const child of children) child.kill('SIGTERM')
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)))
  await standalone?.close()
  await cluster?.close()
  rmSync(dataDir, { recursive: true, force: true })
}

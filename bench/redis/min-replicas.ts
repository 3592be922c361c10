// What ALGOSERVE_REDIS_MIN_REPLICAS=1 costs POST /jobs: one API process (`algoserve serve`, no job
// runner, so only the posts load Redis) per configuration, each on Redis of its own, in the same run:
//   standalone   one redis-server, the setting at 0 (the baseline)
//   replica      a primary with one replica, the setting at 0
//   min-replicas a primary with one replica, the setting at 1 (each 202 waits for the replica's WAIT)
// ROUNDS rounds, alternating the configurations; in each, CLIENTS clients post POSTS jobs in all, one
// after another each. Reports each round's p50 and p99 of the answer time seen by the clients, and per
// configuration the median of the rounds' p50 and p99, and that p99 minus the standalone one.
//
//   npm run bench:min-replicas   (ROUNDS=5 POSTS=3000 CLIENTS=8)
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { sleep, until } from '../../test/helpers/time.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { freshPrefix, type RedisServer, redisCommand, startRedis } from '../lib/redis.js'
import { startService } from '../lib/service.js'
import { percentile, upperMedian } from '../lib/stats.js'

writeResultOnExit(
  'min-replicas',
  {
    title: 'what ALGOSERVE_REDIS_MIN_REPLICAS=1 costs POST /jobs',
    script: 'bench/redis/min-replicas.ts',
    npm: 'npm run bench:min-replicas',
    history: 'docs/benchmarks/redis.md',
    command: 'npx tsx bench/redis/min-replicas.ts',
  },
  ['CLIENTS', 'POSTS', 'ROUNDS'],
)

const ROUNDS = Number(process.env.ROUNDS ?? 5)
const POSTS = Number(process.env.POSTS ?? 3000)
const CLIENTS = Number(process.env.CLIENTS ?? 8)

interface Config {
  name: string
  redis: RedisServer[]
  minReplicas: number
  api?: ChildProcess
  port?: number
  p50s: number[]
  p99s: number[]
}

async function startApi(config: Config, dataDir: string): Promise<void> {
  const primary = config.redis[0] as RedisServer
  const api = await startService({
    from: 'src',
    env: {
      ALGOSERVE_LOG_LEVEL: 'warn',
      ALGOSERVE_DATA_DIR: dataDir,
      ALGOSERVE_REDIS_URL: primary.url,
      ALGOSERVE_REDIS_PREFIX: freshPrefix(),
      ALGOSERVE_REDIS_MIN_REPLICAS: String(config.minReplicas),
      ALGOSERVE_MAX_PENDING_JOBS: '10000000',
    },
    everyMs: 200,
  })
  config.port = api.port
  config.api = api.child
}

async function round(config: Config, offset: number): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${config.port}`, { connections: CLIENTS })
  const times: number[] = []
  let next = 0
  let refused = 0
  const client = async () => {
    while (next < POSTS) {
      const n = next++
      const body = JSON.stringify({ algorithm: 'PrimeChecker', params: { number: String(offset + n) } })
      const sent = performance.now()
      const answer = await pool.request({
        path: '/jobs',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      await answer.body.dump()
      times.push(performance.now() - sent)
      if (answer.statusCode !== 202) refused++
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, client))
  await pool.close()
  const p50 = percentile(times, 0.5)
  const p99 = percentile(times, 0.99)
  config.p50s.push(p50)
  config.p99s.push(p99)
  console.log(
    JSON.stringify({
      config: config.name,
      p50: +p50.toFixed(2),
      p99: +p99.toFixed(2),
      refused,
      posts: POSTS,
    }),
  )
}

console.log(`ROUNDS=${ROUNDS} POSTS=${POSTS} CLIENTS=${CLIENTS} node ${process.version}`)
const dataDir = mkdtempSync(join(tmpdir(), 'algoserve-bench-'))
const standalone = await startRedis()
const primary = await startRedis()
const replica = await startRedis(['--replicaof', '127.0.0.1', String(primary.port)])
await until(async () => (await redisCommand(primary.port, 'WAIT 1 100')) === '1', 10_000, 'replica in sync')
const configs: Config[] = [
  { name: 'standalone', redis: [standalone], minReplicas: 0, p50s: [], p99s: [] },
  { name: 'replica', redis: [primary, replica], minReplicas: 0, p50s: [], p99s: [] },
  { name: 'min-replicas', redis: [primary, replica], minReplicas: 1, p50s: [], p99s: [] },
]
try {
  for (const config of configs) await startApi(config, dataDir)
  // A warm-up round each, not counted.
  for (const config of configs) {
    await round(config, 0)
    config.p50s.length = 0
    config.p99s.length = 0
  }
  for (let r = 1; r <= ROUNDS; r++) {
    for (const config of configs) {
      await round(config, r * 10_000_000)
      await sleep(500)
    }
  }
  const base = upperMedian(configs[0]?.p99s ?? [])
  console.table(
    configs.map((config) => ({
      config: config.name,
      'p50 ms (median of rounds)': +upperMedian(config.p50s).toFixed(2),
      'p99 ms (median of rounds)': +upperMedian(config.p99s).toFixed(2),
      'p99 - standalone p99 ms': +(upperMedian(config.p99s) - base).toFixed(2),
      'p99 of each round': config.p99s.map((p) => +p.toFixed(1)).join(' '),
    })),
  )
} finally {
  for (const config of configs) config.api?.kill('SIGTERM')
  await Promise.all(
    configs.map((c) =>
      c.api && c.api.exitCode === null ? new Promise((r) => c.api?.once('exit', r)) : null,
    ),
  )
  await Promise.all([standalone, primary, replica].map((server) => server.close()))
  rmSync(dataDir, { recursive: true, force: true })
}

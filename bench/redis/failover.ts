// Sentinel failovers under load: a primary, two replicas and three sentinels (quorum two); one service
// (API and worker in one process) on them; FAILOVERS times, CLIENTS clients post jobs one after another
// while the primary is SIGKILLed, then the killed server is started again as a replica of the new
// primary (once every sentinel names that primary), and the service accepts a job, before the next. Once with
// each ALGOSERVE_REDIS_MIN_REPLICAS in SETTINGS. Reports per failover: the promotion's time after the kill,
// /readyz 200 and the first 202 after the promotion, the answers, the accepted jobs lost (not found
// afterwards) and any answer that should never be (a status other than 202 or 503, a 503 without Retry-After,
// no answer within 10 s); and whether every accepted job that is not lost completes. With LAG_MS, the
// replicas lag: they are cut off for that long before each kill, so what is written meanwhile reaches none of
// them.
//
//   npm run bench:failover   (FAILOVERS=5 CLIENTS=8 SETTINGS=1,0 LAG_MS=0)
import { Redis } from 'ioredis'
import { startApp } from '../../test/helpers/app.js'
import { failoverUnderLoad } from '../../test/helpers/failover.js'
import { waitForJob } from '../../test/helpers/jobs.js'
import { until } from '../../test/helpers/time.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { freshPrefix, redisCommand, startRedisSentinel } from '../lib/redis.js'

writeResultOnExit(
  'failover',
  {
    title: 'Sentinel failovers under load',
    script: 'bench/redis/failover.ts',
    npm: 'npm run bench:failover',
    history: 'docs/benchmarks/redis.md',
    command: 'npx tsx bench/redis/failover.ts',
  },
  ['CLIENTS', 'FAILOVERS', 'LAG_MS', 'SETTINGS'],
)

const FAILOVERS = Number(process.env.FAILOVERS ?? 5)
const CLIENTS = Number(process.env.CLIENTS ?? 8)
const SETTINGS = (process.env.SETTINGS ?? '1,0').split(',').map(Number)
const LAG_MS = Number(process.env.LAG_MS ?? 0)

async function failovers(minReplicas: number) {
  const set = await startRedisSentinel(2, 3)
  const app = await startApp({
    redisUrl: `redis://${set.sentinel}`,
    redisSentinels: set.sentinels,
    redisSentinelName: set.name,
    redisPrefix: freshPrefix(),
    redisMinReplicas: minReplicas,
    runJobs: true,
    maxPendingJobs: 1_000_000,
    // A job taken on the primary alone runs again once its lock lapses: soon, with a short lock.
    jobLockMs: 2000,
  })
  const rows = []
  let lost = 0
  let accepted = 0
  let unexpected = 0
  let unfinished = 0
  try {
    for (let round = 1; round <= FAILOVERS; round++) {
      await accepting(app.url, set)
      const run = await failoverUnderLoad(app.url, set, {
        clients: CLIENTS,
        before: 100,
        after: 100,
        lagMs: LAG_MS,
      })
      rows.push({
        MIN_REPLICAS: minReplicas,
        failover: round,
        'promoted after kill ms': run.promotionMs,
        'ready after promotion ms': run.readyMs,
        'first 202 after promotion ms': run.firstAcceptedMs,
        accepted: run.accepted.length,
        '503': run.statuses[503] ?? 0,
        lost: run.lost.length,
        unexpected: run.unexpected.length,
      })
      console.log(JSON.stringify(rows.at(-1)), run.unexpected.slice(0, 3))
      accepted += run.accepted.length
      lost += run.lost.length
      unexpected += run.unexpected.length
      for (const id of run.accepted.filter((id) => !run.lost.includes(id))) {
        const job = await waitForJob(app.url, id, undefined, 60_000).catch(() => undefined)
        if (job?.status !== 'completed') unfinished++
      }
      // The killed server back, as a replica of the new primary, before the next failover: once every
      // sentinel names that primary, and started as its replica, so that it is never a primary beside
      // the promoted one that a client reconnecting then could be sent to.
      const primary = await set.currentPrimary()
      const address = `127.0.0.1:${primary.port}`
      await until(
        async () => {
          const named = await Promise.all(
            set.sentinels.map((sentinel) =>
              redisCommand(Number(sentinel.split(':')[1]), `SENTINEL GET-MASTER-ADDR-BY-NAME ${set.name}`),
            ),
          )
          return named.every((each) => each.replace('\n', ':') === address)
        },
        30_000,
        'every sentinel names the new primary',
        100,
      )
      await run.killed?.restart(['--replicaof', '127.0.0.1', String(primary.port)])
      // A replica cut off by LAG_MS follows a dead port, which the sentinels may not set right: set it.
      for (const server of [set.primary, ...set.replicas]) {
        if (server !== primary) await redisCommand(server.port, `REPLICAOF 127.0.0.1 ${primary.port}`)
      }
      const client = new Redis(primary.port, '127.0.0.1', { lazyConnect: true })
      try {
        await until(
          async () => {
            const info = await client.info('replication').catch(() => '')
            return /connected_slaves:2/.test(info) && (info.match(/state=online/g) ?? []).length === 2
          },
          60_000,
          'both replicas online',
          100,
        )
      } finally {
        client.disconnect()
      }
      // And every sentinel knows both as good replicas (the sentinels learn them from the primary's
      // INFO every 10 s): a replica they do not know is not moved to the next primary.
      for (const address of set.sentinels) {
        const sentinel = new Redis(Number(address.split(':')[1]), '127.0.0.1', { lazyConnect: true })
        try {
          await until(
            async () => {
              const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', set.name)) as string[][]
              const good = replicas.filter((fields) => {
                const field = (name: string) => fields[fields.indexOf(name) + 1]
                return field('flags') === 'slave' && field('master-link-status') === 'ok'
              })
              return good.length === 2
            },
            60_000,
            `sentinel ${address} knows both replicas`,
            200,
          )
        } finally {
          sentinel.disconnect()
        }
      }
    }
  } finally {
    await app.close()
    await set.close()
  }
  return { rows, total: { minReplicas, failovers: FAILOVERS, accepted, lost, unexpected, unfinished } }
}

/**
 * Waits until the service accepts a job, as a failover needs jobs accepted before its kill; if it does
 * not within 30 s, says what each server and sentinel says, to tell why, and stops.
 */
async function accepting(url: string, set: Awaited<ReturnType<typeof startRedisSentinel>>) {
  const job = JSON.stringify({ algorithm: 'PrimeChecker', params: { number: '97' } })
  const post = () =>
    fetch(`${url}/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: job })
  await until(async () => (await post()).status === 202, 30_000, 'a job accepted', 100).catch(
    async (error: unknown) => {
      const roles = await Promise.all(
        [set.primary, ...set.replicas].map(
          async (server) =>
            `${server.port} ${(await redisCommand(server.port, 'ROLE')).split('\n').join(' ')}`,
        ),
      )
      const named = await Promise.all(
        set.sentinels.map((sentinel) =>
          redisCommand(Number(sentinel.split(':')[1]), `SENTINEL GET-MASTER-ADDR-BY-NAME ${set.name}`),
        ),
      )
      const answer = await (await post()).text()
      throw new Error(`${(error as Error).message}: roles ${roles}; sentinels name ${named}; POST ${answer}`)
    },
  )
}

console.log(`FAILOVERS=${FAILOVERS} CLIENTS=${CLIENTS} LAG_MS=${LAG_MS} node ${process.version}`)
const rows = []
const totals = []
for (const setting of SETTINGS) {
  const result = await failovers(setting)
  rows.push(...result.rows)
  totals.push(result.total)
}
console.table(rows)
console.table(totals)

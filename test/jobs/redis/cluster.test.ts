// Distributed mode on a Redis Cluster of three primaries: a job submitted, run, read, listed, counted,
// cancelled and its webhook delivered, as on one server; every key of the deployment in one slot (the
// hash-tagged prefix), so on one node.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startApp, type TestApp } from '../../helpers/app.js'
import { createJob, waitForJob } from '../../helpers/jobs.js'
import { RSA_100 } from '../../helpers/numbers.js'
import { type Receiver, startReceiver } from '../../helpers/receiver.js'
import {
  freshPrefix,
  PRIME_CHECKER_QUEUE,
  type RedisCluster,
  redisCommand,
  skipWithoutRedis,
  startRedisCluster,
} from '../../helpers/redis.js'
import { sleep, until } from '../../helpers/time.js'

const portOf = (node: string) => Number(node.split(':')[1])

/**
 * A slot being moved from the node that holds it (MIGRATING) to another (IMPORTING), as a resharding does.
 */
interface Migration {
  /** The ports of the node that holds the slot and of the node it moves to. */
  source: number
  target: number
  /** Moves these keys of the slot to the target (MIGRATE ... KEYS). */
  migrate(keys: string[]): Promise<void>
  /** Moves every key left, then gives the slot to the target on every node. */
  finish(): Promise<void>
}

async function startMigration(cluster: RedisCluster, prefix: string): Promise<Migration> {
  const ports = cluster.nodes.map(portOf)
  const [first] = ports as [number]
  const slot = await redisCommand(first, `CLUSTER KEYSLOT ${prefix}`)
  const source = (await cluster.holder(prefix)).port
  const target = ports.find((port) => port !== source) as number
  const id = async (port: number) => (await redisCommand(port, 'CLUSTER MYID')).trim()
  const [sourceId, targetId] = [await id(source), await id(target)]
  assert.equal(await redisCommand(target, `CLUSTER SETSLOT ${slot} IMPORTING ${sourceId}`), '+OK')
  assert.equal(await redisCommand(source, `CLUSTER SETSLOT ${slot} MIGRATING ${targetId}`), '+OK')
  const migrate = async (keys: string[]) => {
    const moved = await redisCommand(source, `MIGRATE 127.0.0.1 ${target} "" 0 5000 KEYS ${keys.join(' ')}`)
    assert.match(moved, /^\+OK|^\+NOKEY/)
  }
  return {
    source,
    target,
    migrate,
    async finish() {
      for (;;) {
        const keys = (await redisCommand(source, `CLUSTER GETKEYSINSLOT ${slot} 100`))
          .split('\n')
          .filter(Boolean)
        if (keys.length === 0) break
        await migrate(keys)
      }
      for (const port of ports) {
        assert.equal(await redisCommand(port, `CLUSTER SETSLOT ${slot} NODE ${targetId}`), '+OK')
      }
    },
  }
}

/** Moves the slot of `prefix`'s hash tag, keys and all, to another primary, as a resharding does. */
async function moveSlot(cluster: RedisCluster, prefix: string): Promise<void> {
  const migration = await startMigration(cluster, prefix)
  await migration.finish()
  assert.equal(await redisCommand(migration.source, 'DBSIZE'), '0')
  assert.notEqual(await redisCommand(migration.target, 'DBSIZE'), '0')
}

describe('distributed mode on a Redis Cluster', { skip: skipWithoutRedis, timeout: 60_000 }, () => {
  let cluster: RedisCluster
  let app: TestApp
  let receiver: Receiver
  before(async () => {
    cluster = await startRedisCluster()
    receiver = await startReceiver(() => 204)
    const env = cluster.env(`{${freshPrefix()}}`)
    app = await startApp({
      redisUrl: env.ALGOSERVE_REDIS_URL as string,
      redisClusterNodes: cluster.nodes,
      redisPrefix: env.ALGOSERVE_REDIS_PREFIX as string,
      runJobs: true,
      jobConcurrency: 2,
      // A run whose end is refused while the slot moves runs again once its lock lapses: soon.
      jobLockMs: 2000,
      jobFactorBudgetMs: 1500,
      webhookAllowPrivate: true,
    })
  })
  after(async () => {
    await app?.close()
    await receiver?.close()
    await cluster?.close()
  })

  test('submit, run, read, list, summary, webhook, deliveries', async () => {
    const created = await createJob(app.url, {
      algorithm: 'PrimeChecker',
      params: { number: '97' },
      webhook: receiver.url,
    })
    assert.equal(created.status, 202, JSON.stringify(created.json))
    const id = created.json.job_id as string
    const job = await waitForJob(app.url, id)
    assert.equal(job.status, 'completed')
    assert.equal(job.result?.is_prime, true, JSON.stringify(job))
    const [delivery] = await receiver.waitFor(1)
    assert.equal(JSON.parse(delivery?.body ?? '{}').job_id, id)

    const listed = (await (await fetch(`${app.url}/jobs?status=completed`)).json()) as {
      jobs: Array<{ job_id: string }>
    }
    assert.ok(
      listed.jobs.some((entry) => entry.job_id === id),
      JSON.stringify(listed),
    )
    const summary = (await (await fetch(`${app.url}/job-summary`)).json()) as Record<string, unknown>
    assert.match(JSON.stringify(summary), /"completed":1/)
    const deliveries = await until(async () => {
      const response = await fetch(`${app.url}/jobs/${id}/deliveries`)
      const body = (await response.json()) as { attempts?: unknown[] }
      return response.status === 200 && (body.attempts?.length ?? 0) > 0 && body
    }, 10_000)
    assert.ok(deliveries)
  })

  test('a running job is cancelled', async () => {
    const created = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })
    const id = created.json.job_id as string
    await waitForJob(app.url, id, (job) => job.status === 'running')
    const cancel = await fetch(`${app.url}/jobs/${id}/cancel`, { method: 'POST' })
    assert.ok(cancel.status < 300, `${cancel.status} ${await cancel.text()}`)
    const job = await waitForJob(app.url, id)
    assert.equal(job.status, 'failed')
    assert.match(String(job.error), /cancel/i)
  })

  test('the slot moved to another node while the service runs: its MOVED answers followed, old and new jobs served', async () => {
    const before = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: '91' } })
    await waitForJob(app.url, before.json.job_id as string)
    await moveSlot(cluster, app.config.redisPrefix)
    assert.equal((await waitForJob(app.url, before.json.job_id as string)).result?.is_prime, false)
    const created = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: '101' } })
    assert.equal(created.status, 202, JSON.stringify(created.json))
    const job = await waitForJob(app.url, created.json.job_id as string)
    assert.equal(job.result?.is_prime, true, JSON.stringify(job))
  })

  test('the slot mid-migration: keys moved answer ASK and are followed, jobs are read; new jobs 503 with Retry-After until the slot is given (TRYAGAIN), never a 500; a run across it completes; then served as before', async () => {
    const prefix = app.config.redisPrefix
    const old = (await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: '91' } })).json
      .job_id as string
    await waitForJob(app.url, old)
    const running = (await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } }))
      .json.job_id as string
    await waitForJob(app.url, running, (job) => job.status === 'running')
    const migration = await startMigration(cluster, prefix)
    const oldKey = `${prefix}:${PRIME_CHECKER_QUEUE}:${old}`
    await migration.migrate([oldKey])
    assert.match(
      await redisCommand(migration.source, `HGETALL ${oldKey}`),
      /^-ASK /,
      'a read of it answers ASK',
    )
    const read = await waitForJob(app.url, old)
    assert.equal(read.result?.is_prime, false)
    assert.equal((await waitForJob(app.url, running, () => true)).status, 'running')
    // BullMQ's scripts name keys the node has not got (the new job's, states never used): refused with
    // TRYAGAIN until the slot is given, so no job is added meanwhile.
    const refusedUntil = Date.now() + 2000
    while (Date.now() < refusedUntil) {
      const created = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: '97' } })
      assert.equal(created.status, 503, JSON.stringify(created.json))
      assert.match(created.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/)
      await sleep(100)
    }
    await migration.finish()
    const created = await createJob(app.url, { algorithm: 'PrimeChecker', params: { number: '101' } })
    assert.equal(created.status, 202, JSON.stringify(created.json))
    assert.equal((await waitForJob(app.url, created.json.job_id as string)).result?.is_prime, true)
    assert.equal((await waitForJob(app.url, running, undefined, 30_000)).status, 'completed')
    assert.equal((await waitForJob(app.url, old)).result?.is_prime, false)
  })

  test('every key of the deployment is on one node (one slot)', async () => {
    const sizes = await Promise.all(
      cluster.nodes.map(async (node) => Number(await redisCommand(Number(node.split(':')[1]), 'DBSIZE'))),
    )
    assert.equal(sizes.filter((size) => size > 0).length, 1, `keys per node: ${sizes.join(', ')}`)
  })
})

// Distributed mode as operators run it: `algoserve serve` and `algoserve worker` child processes on a
// real redis-server, killed with real signals, and the redis-server itself killed and restarted; every
// test again on a three-primary Redis Cluster (there the node that holds the deployment's slot is the
// one killed, and one node alone evicts keys or has AOF off).
// Nothing a client got a 202 for is lost. Timings use a 1 s job lock; the delays seen are reported.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { lostRunsError } from '../../../src/jobs/job.js'
import { type Child, listening, start } from '../../helpers/child.js'
import { createJob, type JobBody } from '../../helpers/jobs.js'
import { isPrimeByTrial, RSA_100 } from '../../helpers/numbers.js'
import { type Receiver, startReceiver } from '../../helpers/receiver.js'
import {
  freePort,
  freshPrefix,
  PRIME_CHECKER_QUEUE,
  type RedisCluster,
  type RedisServer,
  redisCommand,
  skipWithoutRedis,
  startRedis,
  startRedisCluster,
} from '../../helpers/redis.js'
import { sleep, until } from '../../helpers/time.js'

// Short, so that takeovers are quick; not shorter, because a process starved of CPU for a lock period
// (a loaded CI machine) has its runs and deliveries taken as stalled, which is not what these tests
// are about, and a delivery taken so repeatedly is failed (maxStalledCount).
const LOCK_MS = 2000

/** A test's own `algoserve serve` and `algoserve worker` processes on one Redis deployment. */
interface Processes {
  prefix: string
  children: Child[]
  api(extra?: string[]): Promise<string>
  worker(extra?: string[]): Promise<{ child: Child; url: string }>
  close(): Promise<void>
}

/**
 * `redis`: the flags that name the Redis (a server's URL, or a Cluster's nodes); `prefix`: the key prefix.
 */
function processes(redis: string[], prefix = freshPrefix()): Processes {
  const children: Child[] = []
  const common = [
    ...redis,
    '--redis-prefix',
    prefix,
    '--job-lock-ms',
    String(LOCK_MS),
    '--worker-threads',
    '1',
    // One job at a time, as the tests' backlogs assume.
    '--job-concurrency',
    '1',
    '--webhook-allow-private',
    'true',
  ]
  const spawn = (args: string[]) => {
    const child = start(args)
    children.push(child)
    return child
  }
  return {
    prefix,
    children,
    api: (extra = []) => listening(spawn(['serve', '--port', '0', ...common, ...extra])),
    async worker(extra = []) {
      const child = spawn(['worker', '--worker-port', '0', ...common, ...extra])
      return { child, url: await listening(child) }
    },
    async close() {
      for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL')
      await Promise.all(children.map((child) => child.exit))
    },
  }
}

async function readJob(url: string, id: string): Promise<JobBody | undefined> {
  const response = await fetch(`${url}/jobs/${id}`).catch(() => undefined)
  return response?.status === 200 ? ((await response.json()) as JobBody) : undefined
}

const waitJob = (url: string, id: string, done: (job: JobBody) => boolean, timeoutMs = 30_000) =>
  until(
    async () => {
      const job = await readJob(url, id)
      return job !== undefined && done(job) && job
    },
    timeoutMs,
    `job ${id} got there`,
    25,
  )

const finished = (job: JobBody) => job.status === 'completed' || job.status === 'failed'

/**
 * A Redis deployment of one kind, as the tests start their own: on ports reserved beforehand or free ones.
 */
interface Topology {
  /** How soon a post is refused while the server that holds the deployment's keys is down. */
  refusedWithinMs: number
  /** A fresh key prefix fit for it (hash-tagged on a Cluster: every key of a deployment in one slot). */
  prefix(): string
  /** Free ports for one deployment. */
  reserve(): Promise<number[]>
  /** The flags that name the deployment on `ports` to the processes. */
  flags(ports: number[]): string[]
  /**
   * Starts one on `ports`; `odd`: arguments of one server only (on a Cluster, a node other than the
   * one the URL names).
   */
  start(ports?: number[], odd?: string[]): Promise<Deployment>
}

interface Deployment {
  ports: number[]
  /** The server that holds `prefix`'s keys. */
  holder(prefix: string): Promise<RedisServer>
  close(): Promise<void>
}

const oneServer: Topology = {
  refusedWithinMs: 3000,
  prefix: freshPrefix,
  reserve: async () => [await freePort()],
  flags: ([port]) => ['--redis-url', `redis://127.0.0.1:${port}`],
  async start(ports = [], odd = []) {
    const server = await startRedis(odd, ports[0])
    return { ports: [server.port], holder: async () => server, close: () => server.close() }
  },
}

const cluster: Topology = {
  // The cluster client still knows the dead node and waits to reach it: a post's command fails at its
  // time limit (2 s), not at once.
  refusedWithinMs: 5000,
  prefix: () => `{${freshPrefix()}}`,
  reserve: async () => [await freePort(), await freePort(), await freePort()],
  flags: (ports) => [
    '--redis-url',
    `redis://127.0.0.1:${ports[0]}`,
    '--redis-cluster-nodes',
    ports.map((port) => `127.0.0.1:${port}`).join(','),
  ],
  async start(ports, odd = []) {
    const started: RedisCluster = await startRedisCluster({ ports, nodeArgs: (i) => (i === 2 ? odd : []) })
    return {
      ports: started.servers.map((server) => server.port),
      holder: (prefix) => started.holder(prefix),
      close: () => started.close(),
    }
  },
}

/** Every test on `topology`: a deployment shared by those that need only their own prefix, and their own. */
function distributed(name: string, topology: Topology): void {
  describe(name, { skip: skipWithoutRedis }, () => {
    let redis: Deployment
    let receiver: Receiver
    before(async () => {
      redis = await topology.start()
      receiver = await startReceiver(() => 200)
    })
    after(async () => {
      await receiver.close()
      await redis.close()
    })
    const on = (deployment: Deployment) => processes(topology.flags(deployment.ports), topology.prefix())

    acrossProcesses(
      () => on(redis),
      () => receiver,
    )

    test('a Redis that evicts keys is refused at start, naming maxmemory-policy; AOF off is warned about', {
      timeout: 120_000,
    }, async (t) => {
      const evicting = await topology.start(undefined, ['--maxmemory-policy', 'allkeys-lru'])
      t.after(() => evicting.close())
      const flags = (deployment: Deployment) => [
        ...topology.flags(deployment.ports),
        '--redis-prefix',
        topology.prefix(),
      ]
      const refused = start(['worker', '--worker-port', '0', ...flags(evicting)])
      const outcome = await Promise.race([refused.exit, listening(refused).then(() => 'started')])
      assert.equal(outcome, 1, refused.output())
      assert.match(refused.output(), /maxmemory-policy allkeys-lru/)
      assert.match(refused.output(), /noeviction/)
      const noAof = await topology.start(undefined, ['--appendonly', 'no'])
      t.after(() => noAof.close())
      const warned = start(['serve', '--port', '0', ...flags(noAof)])
      t.after(() => warned.process.kill('SIGKILL'))
      await listening(warned)
      assert.match(warned.output(), /AOF off \(appendonly no\)/)
    })

    test('SIGTERM: a running job gets the grace period, goes back to pending not counted as lost, and completes', {
      timeout: 120_000,
    }, async (t) => {
      const c = on(redis)
      t.after(() => c.close())
      const budget = ['--job-factor-budget-ms', '1500']
      const [api, first] = await Promise.all([
        c.api(),
        c.worker([...budget, '--shutdown-grace-ms', '300', '--drain-delay-ms', '0']),
      ])
      const id = (await createJob(api, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })).json
        .job_id as string
      await waitJob(api, id, (job) => job.status === 'running')
      const stoppedAt = Date.now()
      first.child.process.kill('SIGTERM')
      assert.equal(await first.child.exit, 0, first.child.output())
      assert.ok(Date.now() - stoppedAt < 1400, 'the grace period, not the job, set the shutdown time')
      const back = await readJob(api, id)
      assert.equal(back?.status, 'pending', 'given back')
      assert.equal(back?.started_at, null)
      // BullMQ writes the stall and attempt counters only once they are above 0.
      const holder = await redis.holder(c.prefix)
      const counters = await redisCommand(
        holder.port,
        `HMGET ${c.prefix}:${PRIME_CHECKER_QUEUE}:${id} stc atm`,
      )
      assert.deepEqual(
        counters.split('\n').filter((n) => n !== '' && n !== '0'),
        [],
        'neither a stall nor an attempt',
      )
      await c.worker(budget)
      const done = await waitJob(api, id, finished)
      assert.equal(done.status, 'completed')
      assert.equal(done.result?.factorization_complete, false, 'it ran its whole budget again')
    })

    test('Redis down at start: /healthz up, /readyz and jobs 503 at once, /invoke works, no job behind the back; then recovers', {
      timeout: 120_000,
    }, async (t) => {
      const ports = await topology.reserve()
      const c = processes(topology.flags(ports), topology.prefix())
      t.after(() => c.close())
      const api = await c.api(['--run-jobs', 'true'])
      assert.equal((await fetch(`${api}/healthz`)).status, 200)
      const ready = await fetch(`${api}/readyz`)
      assert.equal(ready.status, 503)
      assert.deepEqual(((await ready.json()) as { checks: unknown }).checks, {
        algorithm: true,
        store: false,
      })
      const times: number[] = []
      for (let i = 0; i < 5; i++) {
        const begun = performance.now()
        const created = await createJob(api, { algorithm: 'PrimeChecker', params: { number: 7 } })
        times.push(performance.now() - begun)
        assert.equal(created.status, 503)
        assert.equal((created.json.detail as { error: string }).error, 'SERVICE_UNAVAILABLE')
        assert.match(created.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/)
        const read = await fetch(`${api}/jobs/0123456789ab`)
        assert.equal(read.status, 503)
        assert.match(read.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/)
      }
      assert.ok(Math.max(...times) < 100, `503 within 100 ms: ${times.map(Math.round).join(', ')} ms`)
      t.diagnostic(
        `POST /jobs with Redis down answered 503 in ${times.map((ms) => ms.toFixed(1)).join(', ')} ms`,
      )
      const invoked = await fetch(`${api}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"number": 97}',
      })
      assert.equal(invoked.status, 200)

      const late = await topology.start(ports)
      t.after(() => late.close())
      await until(async () => (await fetch(`${api}/readyz`)).status === 200, 15_000, 'readiness came back')
      await sleep(500)
      const holder = await late.holder(c.prefix)
      const keys = await redisCommand(holder.port, `KEYS ${c.prefix}:${PRIME_CHECKER_QUEUE}:*`)
      const jobKeys = keys.split('\n').filter((key) => /:jobs\.PrimeChecker:[0-9a-f]{12}$/.test(key))
      assert.deepEqual(jobKeys, [], 'no job was created behind a 503')
      const created = await createJob(api, { algorithm: 'PrimeChecker', params: { number: 7 } })
      assert.equal(created.status, 202)
      assert.equal((await waitJob(api, created.json.job_id as string, finished)).status, 'completed')
    })

    test('redis-server SIGKILLed and restarted under load: every job that got a 202 completes', {
      timeout: 180_000,
    }, async (t) => {
      const own = await topology.start()
      t.after(() => own.close())
      const c = on(own)
      t.after(() => c.close())
      // On a Cluster, the node that holds the deployment's slot; it rejoins with its nodes.conf and AOF.
      const holder = await own.holder(c.prefix)
      const [api] = await Promise.all([c.api(), c.worker()])
      const accepted: string[] = []
      const refused: number[] = []
      let posting = true
      const client = async () => {
        for (let i = 0; posting; i++) {
          const begun = performance.now()
          const created = await createJob(api, {
            algorithm: 'PrimeChecker',
            params: { number: 1_000_003 + 2 * i },
          }).catch(() => undefined)
          if (created?.status === 202) accepted.push(created.json.job_id as string)
          else if (created?.status === 503) {
            refused.push(performance.now() - begun)
            await sleep(20)
          } else assert.fail(`POST /jobs answered ${created?.status}`)
        }
      }
      const clients = Array.from({ length: 8 }, client)
      await until(() => accepted.length >= 300, 30_000, '300 jobs accepted')
      await holder.kill('SIGKILL')
      const before = accepted.length
      await until(() => refused.length > 0, 10_000, 'a POST refused while Redis is away')
      const ready = await fetch(`${api}/readyz`)
      assert.equal(ready.status, 503, 'not ready while Redis is away')
      const invoked = await fetch(`${api}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"number": 97}',
      })
      assert.equal(invoked.status, 200, '/invoke works without Redis')
      await holder.restart()
      await until(() => accepted.length >= before + 300, 30_000, '300 more jobs accepted after the restart')
      posting = false
      await Promise.all(clients)
      assert.ok(refused.length > 0, 'jobs were refused while Redis was away')
      assert.ok(
        Math.max(...refused) < topology.refusedWithinMs,
        `each 503 came quickly: at most ${Math.round(Math.max(...refused))} ms`,
      )
      let missing: string[] = []
      await until(
        async () => {
          const states = await Promise.all(accepted.map((id) => readJob(api, id)))
          missing = accepted.filter((_, i) => states[i]?.status !== 'completed')
          return missing.length === 0
        },
        90_000,
        () => `every accepted job completed; not yet: ${missing.length} of ${accepted.length}`,
        500,
      )
      t.diagnostic(
        `${accepted.length} jobs accepted, all completed; ${refused.length} POSTs refused while Redis was away ` +
          `(slowest ${Math.round(Math.max(...refused))} ms)`,
      )
    })
  })
}

distributed('distributed mode', oneServer)
distributed('distributed mode on a Redis Cluster', cluster)

/**
 * What processes killed and cancels across processes do, on any Redis deployment: `deployment` starts
 * a test's own processes on it, `receiver` is the suite's webhook receiver.
 */
function acrossProcesses(deployment: () => Processes, receiver: () => Receiver): void {
  test('a worker SIGKILLed mid-job three times: taken over each time, then failed as lost 3 times, webhook sent', {
    timeout: 180_000,
  }, async (t) => {
    const c = deployment()
    t.after(() => c.close())
    const budget = ['--job-factor-budget-ms', '20000']
    const [api, first] = await Promise.all([c.api(), c.worker(budget)])
    const created = await createJob(api, {
      algorithm: 'PrimeChecker',
      params: { number: RSA_100 },
      webhook: receiver().url,
    })
    const id = created.json.job_id as string
    let running = await waitJob(api, id, (job) => job.status === 'running')
    let current = first
    const takeovers: number[] = []
    for (let kill = 1; kill <= 3; kill++) {
      // The next worker is up before the current one dies, so the delay is BullMQ's alone.
      const next = await c.worker(budget)
      current.child.process.kill('SIGKILL')
      const killedAt = Date.now()
      await current.child.exit
      const startedBefore = running.started_at
      if (kill < 3) {
        running = await waitJob(
          api,
          id,
          (job) => job.status === 'running' && job.started_at !== startedBefore,
        )
        takeovers.push(Date.parse(running.started_at as string) - killedAt)
      }
      current = next
    }
    const failed = await waitJob(api, id, finished)
    assert.equal(failed.status, 'failed')
    assert.equal(failed.error, lostRunsError(3))
    assert.equal(failed.result, null)
    const delivery = await until(
      () => receiver().received.find((r) => r.body.includes(`"job_id":"${id}"`)),
      10_000,
      'the webhook of the failed job arrived',
    )
    const payload = JSON.parse(delivery.body) as JobBody
    assert.equal(payload.status, 'failed')
    assert.equal(payload.error, lostRunsError(3))
    for (const delay of takeovers) assert.ok(delay < 4 * LOCK_MS, `taken over within 4 locks: ${delay} ms`)
    t.diagnostic(`takeover delays with ALGOSERVE_JOB_LOCK_MS=${LOCK_MS}: ${takeovers.join(', ')} ms`)
  })

  test('job control across processes: a cancel at one API stops the run in a worker process; a wait at another API ends with it', {
    timeout: 120_000,
  }, async (t) => {
    const c = deployment()
    t.after(() => c.close())
    const [api, otherApi] = await Promise.all([
      c.api(),
      c.api(),
      c.worker(['--job-factor-budget-ms', '60000']),
    ])
    const id = (
      await createJob(api, {
        algorithm: 'PrimeChecker',
        params: { number: RSA_100 },
        webhook: receiver().url,
      })
    ).json.job_id as string
    await waitJob(api, id, (job) => job.status === 'running')
    const waiting = fetch(`${otherApi}/jobs/${id}?wait=30`).then(async (r) => (await r.json()) as JobBody)
    await sleep(300)
    const cancelledAt = Date.now()
    const answer = await fetch(`${api}/jobs/${id}/cancel`, { method: 'POST' })
    const took = Date.now() - cancelledAt
    assert.equal(answer.status, 200)
    const job = (await answer.json()) as JobBody
    assert.equal(job.status, 'failed')
    assert.equal(job.error, 'The job was cancelled.')
    assert.ok(took < 1500, `the cancel took ${took} ms`)
    const waited = await waiting
    assert.equal(waited.status, 'failed')
    assert.ok(Date.now() - cancelledAt < 3000, 'the wait at the other API ended with the job')
    await until(() => receiver().received.some((r) => JSON.parse(r.body).job_id === id), 10_000, 'webhook')
    const payload = JSON.parse(
      receiver().received.find((r) => JSON.parse(r.body).job_id === id)?.body ?? '{}',
    )
    assert.equal(payload.error, 'The job was cancelled.')
  })

  test('a waiting job cancelled at an API that runs no jobs ends there at once, behind a busy worker, counted once', {
    timeout: 120_000,
  }, async (t) => {
    const c = deployment()
    t.after(() => c.close())
    const [api, worker] = await Promise.all([c.api(), c.worker(['--job-factor-budget-ms', '60000'])])
    const slow = async (webhook: string | null = null) =>
      (await createJob(api, { algorithm: 'PrimeChecker', params: { number: RSA_100 }, webhook })).json
        .job_id as string
    // The worker's one thread is busy for a minute, two jobs wait behind it, the job cancelled is last.
    const busy = await slow()
    await waitJob(api, busy, (job) => job.status === 'running')
    const behind = [await slow(), await slow()]
    const last = await slow(receiver().url)
    const answer = await fetch(`${api}/jobs/${last}/cancel`, { method: 'POST' })
    assert.equal(answer.status, 200)
    await until(() => receiver().received.some((r) => JSON.parse(r.body).job_id === last), 3000, 'webhook')
    // Nothing ahead of it ended to let it through (on a loaded machine the busy job's 1 s lock may
    // lapse, putting it back in line, so it may read pending).
    for (const id of [busy, ...behind]) assert.ok(!finished((await readJob(api, id)) as JobBody), id)
    // Counted once, by the API process that ended it; the worker never took it.
    const failed = 'jobs_completed_total{algorithm="PrimeChecker",status="failed"}'
    const sample = async (url: string, name: string) => {
      const text = await (await fetch(`${url}/metrics`)).text()
      const line = text.split('\n').find((l) => l.startsWith(`${name} `))
      return line === undefined ? 0 : Number(line.slice(name.length + 1))
    }
    assert.equal(await sample(api, failed), 1)
    assert.equal(await sample(api, 'jobs_cancelled_total{algorithm="PrimeChecker"}'), 1)
    assert.equal(await sample(worker.url, failed), 0)
  })

  test('2 APIs and 2 workers share 500 jobs; one worker SIGKILLed midway; every job completes, every webhook arrives', {
    timeout: 240_000,
  }, async (t) => {
    const hook = await startReceiver(() => 200)
    t.after(() => hook.close())
    const c = deployment()
    t.after(() => c.close())
    const budget = ['--job-factor-budget-ms', '300']
    const [api1, api2, w1, w2] = await Promise.all([c.api(), c.api(), c.worker(budget), c.worker(budget)])
    const apis = [api1, api2]
    const ids: string[] = []
    const expected = new Map<string, boolean>()
    let next = 0
    const post = async () => {
      while (next < 500) {
        const i = next++
        // One in 25 holds a thread for its 300 ms budget, so that the kill finds work in flight.
        const number = i % 25 === 0 ? RSA_100 : 1_000_003 + 2 * i
        const created = await createJob(apis[i % 2] as string, {
          algorithm: 'PrimeChecker',
          params: { number },
          webhook: hook.url,
        })
        assert.equal(created.status, 202)
        const id = created.json.job_id as string
        ids.push(id)
        if (typeof number === 'number') expected.set(id, isPrimeByTrial(number))
        if (ids.length === 250) w1.child.process.kill('SIGKILL')
      }
    }
    await Promise.all(Array.from({ length: 16 }, post))
    await w1.child.exit
    let jobs: (JobBody | undefined)[] = []
    await until(
      async () => {
        jobs = await Promise.all(ids.map((id, i) => readJob(apis[i % 2] as string, id)))
        return jobs.every((job) => job !== undefined && finished(job))
      },
      120_000,
      () => `every job finished; not yet ${jobs.filter((job) => !job || !finished(job)).length}`,
      500,
    )
    for (const job of jobs as JobBody[]) {
      assert.equal(job.status, 'completed', `${job.job_id}: ${job.error}`)
      if (expected.has(job.job_id)) assert.equal(job.result?.is_prime, expected.get(job.job_id))
    }
    const delivered = () => new Set(hook.received.map((r) => (JSON.parse(r.body) as JobBody).job_id))
    await until(
      () => delivered().size >= ids.length,
      60_000,
      () => `a webhook for every job: ${hook.received.length} received`,
      200,
    ).catch(async (error: unknown) => {
      // What the service says of a few of the missing webhooks' deliveries, to tell why.
      const missing = ids.filter((id) => !delivered().has(id)).slice(0, 3)
      const histories = await Promise.all(
        missing.map(async (id) => `${id}: ${await (await fetch(`${api1}/jobs/${id}/deliveries`)).text()}`),
      )
      throw new Error(`${(error as Error).message}; deliveries of some missing: ${histories.join('; ')}`)
    })
    const byJob = new Map<string, { ids: Set<string>; bodies: Set<string> }>()
    for (const r of hook.received) {
      const jobId = (JSON.parse(r.body) as JobBody).job_id
      const seen = byJob.get(jobId) ?? { ids: new Set(), bodies: new Set() }
      seen.ids.add(String(r.headers['webhook-id']))
      seen.bodies.add(r.body)
      byJob.set(jobId, seen)
    }
    for (const [jobId, seen] of byJob) {
      assert.equal(seen.ids.size, 1, `one webhook-id for ${jobId}`)
      assert.equal(seen.bodies.size, 1, `one body for ${jobId}`)
    }
    const duplicates = hook.received.length - byJob.size
    // Each process serves its own metrics: the APIs count creations, the surviving worker runs.
    const created = await Promise.all(apis.map((api) => metricSum(api, 'jobs_created_total')))
    assert.equal((created[0] as number) + (created[1] as number), 500)
    assert.ok((await metricSum(w2.url, 'jobs_completed_total')) > 0)
    assert.ok((await metricSum(w2.url, 'webhook_deliveries_total')) > 0)
    t.diagnostic(
      `500 jobs completed; ${hook.received.length} webhook requests, ${duplicates} duplicate attempts`,
    )
  })
}

async function metricSum(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  let sum = 0
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.split(' ').at(-1))
  }
  return sum
}

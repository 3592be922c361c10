// On Redis a delivery's retry that falls due is taken before the fresh deliveries waiting in the webhooks
// queue (src/jobs/redis/deliveries.ts): behind a backlog that takes seconds to go out, each failed
// delivery's second attempt still comes its 1 s after the first; and a delivery queued without a
// priority (by a version before them) is still delivered, its retry too. A real redis-server, real
// receivers, the RedisBackend itself with four delivery places.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Queue } from 'bullmq'
import type { Consumer, RunJob } from '../../../src/jobs/backend.js'
import type { NewJob } from '../../../src/jobs/job.js'
import { RedisBackend } from '../../../src/jobs/redis/backend.js'
import { WEBHOOKS } from '../../../src/jobs/redis/connections.js'
import { WebhookSender } from '../../../src/webhooks/sender.js'
import { SUITE_LOADED, SUITE_VERSIONS, silentLog } from '../../helpers/backends.js'
import { byDelivery, type Receiver, startReceiver } from '../../helpers/receiver.js'
import { freshPrefix, type RedisServer, skipWithoutRedis, startRedis } from '../../helpers/redis.js'
import { until } from '../../helpers/time.js'

const FAILING = 3
const BACKLOG = 200
/** The backlog's receiver answers after this: one place takes 5 deliveries a second, four take 20. */
const SLOW_MS = 200
const FIRST_WAIT_MS = 1000
/** The first wait, and what a take may add to it (a Worker takes its next delivery within SLOW_MS). */
const SECOND_ATTEMPT_WITHIN_MS = 1500

let serial = 0
function newJob(webhook: string): NewJob {
  serial++
  return {
    id: `f1257${String(serial).padStart(7, '0')}`,
    algorithm: 'Echo',
    version: '1.0.0',
    params: `{"n":${serial}}`,
    webhook,
    cheap: true,
    createdAt: Date.now(),
  }
}

const echo: RunJob = async (job) => ({ status: 'completed', result: job.params, metadata: '{}' })

/** A promise and what resolves it. */
function gate(): [Promise<void>, () => void] {
  let open = () => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return [promise, open]
}

describe('redis', { skip: skipWithoutRedis }, () => {
  let redis: RedisServer
  let backend: RedisBackend
  let prefix: string
  let ended = 0
  const consumers: Consumer[] = []
  const receivers: Receiver[] = []
  const sender = new WebhookSender({ userAgent: 'retry-first', secret: null, allowPrivate: true })
  before(async () => {
    redis = await startRedis()
    prefix = freshPrefix()
    backend = new RedisBackend({
      url: redis.url,
      prefix,
      lockMs: 2000,
      versions: SUITE_VERSIONS,
      ttlMs: 60_000,
      maxPending: 10_000,
      retryWaitsMs: [FIRST_WAIT_MS, 5000, 15_000],
      countEnded: () => {
        ended++
      },
      log: silentLog,
    })
    await backend.open()
    // Echo's jobs; the last test starts Other's itself.
    consumers.push(backend.consumeJobs(echo, { concurrency: 4, algorithms: ['Echo'], loaded: SUITE_LOADED }))
    // Four places: the backlog keeps every one busy once the failing receiver's first answers are in.
    const deliveries = { maxInFlight: 4, onAttempt: () => {}, log: silentLog }
    consumers.push(backend.consumeDeliveries((message, signal) => sender.send(message, signal), deliveries))
  })
  after(async () => {
    await Promise.all(consumers.map((consumer) => consumer.stop(0)))
    await backend.close()
    await sender.close()
    await Promise.all(receivers.map((receiver) => receiver.close()))
    await redis.close()
  })

  test('a retry due is taken before the backlog of fresh deliveries: its second attempt 1 s after the first', {
    timeout: 60_000,
  }, async (t) => {
    // Its first attempts are answered (500) once the backlog is queued; later ones 200.
    const [backlogQueued, answer] = gate()
    const failing = await startReceiver((n) => (n < FAILING ? { status: 500, after: backlogQueued } : 200))
    const slow = await startReceiver(() => ({ status: 204, after: SLOW_MS }))
    receivers.push(failing, slow)

    await Promise.all(Array.from({ length: FAILING }, () => backend.submit(newJob(failing.url))))
    await failing.waitFor(FAILING, 10_000)
    const endedBefore = ended
    for (let first = 0; first < BACKLOG; first += 20) {
      await Promise.all(Array.from({ length: 20 }, () => backend.submit(newJob(slow.url))))
    }
    // Every backlog job ended: its delivery is in the webhooks queue (one place takes them meanwhile).
    await until(
      () => ended - endedBefore === BACKLOG,
      20_000,
      () => `${ended - endedBefore} backlog jobs ended`,
    )
    const answeredAt = Date.now()
    answer()

    await failing.waitFor(2 * FAILING, 20_000)
    const seconds = [...byDelivery(failing.received).values()].map((times) => times[1] as number)
    const gaps = seconds.map((at) => at - answeredAt)
    const lastSecond = Math.max(...seconds)
    const backlogLeft = BACKLOG - slow.received.filter((r) => r.at <= lastSecond).length
    t.diagnostic(
      `second attempts ${gaps.join(', ')} ms after the first answers, ${backlogLeft} of the backlog left`,
    )
    assert.equal(seconds.length, FAILING)
    for (const gap of gaps) {
      assert.ok(
        gap >= FIRST_WAIT_MS - 50 && gap < SECOND_ATTEMPT_WITHIN_MS,
        `a second attempt ${gap} ms after the first`,
      )
    }
    // The backlog outlasts the first wait several times over (20 deliveries a second).
    assert.ok(
      backlogLeft > BACKLOG / 2,
      `only ${backlogLeft} of the backlog was left: no backlog to wait behind`,
    )
  })

  test('a delivery queued without a priority (before this version) is delivered, its retry too', {
    timeout: 30_000,
  }, async () => {
    const receiver = await startReceiver((n) => (n === 0 ? 500 : 200))
    receivers.push(receiver)
    // Its job (of Other, not run yet) holds the delivery back while its priority is taken away, as an
    // older version queued it; the backlog of the test above may still be going out.
    const job = { ...newJob(receiver.url), algorithm: 'Other' }
    await backend.submit(job)
    const webhooks = new Queue(WEBHOOKS, { connection: { host: '127.0.0.1', port: redis.port }, prefix })
    try {
      const delivery = await webhooks.getJob(job.id)
      assert.equal(delivery?.priority, 2, 'a fresh delivery')
      await delivery?.changePriority({ priority: 0 })
      assert.equal((await webhooks.getJob(job.id))?.priority, 0)
    } finally {
      await webhooks.close()
    }
    consumers.push(backend.consumeJobs(echo, { concurrency: 1, algorithms: ['Other'], loaded: SUITE_LOADED }))
    await receiver.waitFor(2, 15_000)
    const history = await until(async () => {
      const now = await backend.deliveries(job.id, Date.now())
      return now?.state === 'delivered' && now
    }, 10_000)
    assert.deepEqual(
      history.attempts.map((a) => [a.attempt, a.statusCode]),
      [
        [1, 500],
        [2, 200],
      ],
    )
  })
})

// Webhook deliveries end to end: a job ends, the service POSTs to a real receiver on a loopback port,
// and retries, gives up or refuses as docs/webhooks.md says; on every job backend.
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import type { LookupAddress } from 'node:dns'
import { after, before, describe, test } from 'node:test'
import type { Service } from '../../src/service.js'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { RSA_100 } from '../helpers/numbers.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { sleep, until } from '../helpers/time.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const SHORT = { retryWaitsMs: [50, 50, 50], timeoutMs: 500 }

interface Deliveries {
  success: number
  retry: number
  failed: number
}

async function deliveries(service: Service): Promise<Deliveries> {
  const counts: Deliveries = { success: 0, retry: 0, failed: 0 }
  const metric = await service.metrics.webhookDeliveries.get()
  for (const { labels, value } of metric.values) counts[labels.status as keyof Deliveries] = value
  return counts
}

/** Verifies a Standard Webhooks signature as a receiver would, independently of the sender's code. */
function verifies(secret: string, headers: Record<string, unknown>, body: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`
  const expected = createHmac('sha256', key).update(signed).digest('base64')
  return String(headers['webhook-signature'])
    .split(' ')
    .some((entry) => entry === `v1,${expected}`)
}

// The real schedule takes a minute and a half of waiting, the same on every Node line: .ci/node-lines.sh
// leaves it to the machine's line.
const realScheduleSkipped =
  process.env.ALGOSERVE_TEST_OTHER_NODE_LINE === '1' &&
  'the real retry schedule is timed on the machine Node line only'

forEachBackend((backend) => {
  describe('on the real schedule', { skip: realScheduleSkipped }, () => {
    let server: TestApp
    const receivers: Receiver[] = []
    before(async () => {
      server = await backend.start({ webhookAllowPrivate: true, webhookSecret: SECRET })
    })
    after(async () => {
      await server.close()
      await Promise.all(receivers.map((r) => r.close()))
    })

    // The whole schedule once (about 21 s) on Redis, where BullMQ keeps it; its first two waits on the
    // embedded store.
    const failures = backend.name === 'redis' ? 3 : 2
    test(`a receiver that fails ${failures} times gets ${failures + 1} attempts, 1 s, 5 s (15 s) apart, one id, signed`, {
      timeout: 60_000,
    }, async (t) => {
      const receiver = await startReceiver((n) => (n < failures ? ([500, 503, 502][n] as number) : 200))
      receivers.push(receiver)
      const created = await createJob(server.url, {
        algorithm: 'PrimeChecker',
        params: { number: '18446744073709551617' },
        webhook: receiver.url,
      })
      const id = created.json.job_id as string
      const attempts = await receiver.waitFor(failures + 1, 40_000)
      const job = await waitForJob(server.url, id)
      const gaps = attempts.slice(1).map((a, i) => a.at - (attempts[i] as { at: number }).at)
      for (const [i, wait] of [1000, 5000, 15_000].slice(0, failures).entries()) {
        const gap = gaps[i] as number
        assert.ok(gap >= wait - 50 && gap < wait + 2000, `wait ${i + 1}: ${gap} ms`)
      }
      t.diagnostic(`waits between attempts: ${gaps.join(', ')} ms`)
      const ids = new Set(attempts.map((a) => a.headers['webhook-id']))
      assert.equal(ids.size, 1, 'the same webhook-id on every attempt')
      assert.match([...ids][0] as string, /^msg_[0-9a-f]+$/)
      for (const attempt of attempts) {
        assert.equal(attempt.headers['content-type'], 'application/json')
        assert.equal(attempt.headers['user-agent'], 'algoserve/1.0.0')
        const timestamp = Number(attempt.headers['webhook-timestamp'])
        assert.ok(Math.abs(timestamp - attempt.at / 1000) < 5, 'webhook-timestamp is the attempt time')
        assert.ok(verifies(SECRET, attempt.headers, attempt.body), 'the signature verifies')
        assert.ok(!verifies(SECRET, attempt.headers, `${attempt.body} `), 'and not for another body')
      }
      // The payload is the interface's, with the exact big integers of the job.
      assert.equal(
        attempts[failures]?.body,
        `{"job_id":"${id}","status":"completed","algorithm":"PrimeChecker","result":{"number":18446744073709551617,` +
          '"is_prime":false,"factors":[274177,67280421310721],"factorization_complete":true,"algorithm":"baillie_psw"},' +
          `"error":null,"metadata":${JSON.stringify(job.metadata)},"completed_at":"${job.completed_at}"}`,
      )
      assert.deepEqual(await deliveries(server.service), { success: 1, retry: failures, failed: 0 })
      assert.equal((await waitForJob(server.url, id)).status, 'completed', 'delivery never changes the job')
    })

    // Once, on the embedded store; a short-schedule test below covers a hanging receiver on Redis.
    if (backend.name === 'embedded')
      test('a receiver that never answers: four attempts each cut at 10 s, and others are not delayed', {
        timeout: 120_000,
      }, async () => {
        const dead = await startReceiver(() => 'hang')
        const alive = await startReceiver(() => 204)
        receivers.push(dead, alive)
        const before = await deliveries(server.service)
        await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: 7 }, webhook: dead.url })
        await dead.waitFor(1, 5000)
        // While the first attempt hangs, another job's webhook goes out at once.
        const other = await createJob(server.url, {
          algorithm: 'PrimeChecker',
          params: { number: 11 },
          webhook: alive.url,
        })
        const [fast] = await alive.waitFor(1, 3000)
        assert.match(fast?.body ?? '', new RegExp(`"job_id":"${other.json.job_id}"`))
        const attempts = await dead.waitFor(4, 90_000)
        // Each gap is the 10 s time limit of one attempt plus the wait before the next.
        const gaps = attempts.slice(1).map((a, i) => a.at - (attempts[i]?.at as number))
        for (const [i, wait] of [1000, 5000, 15_000].entries()) {
          const gap = gaps[i] as number
          assert.ok(gap >= 10_000 + wait - 100 && gap < 10_000 + wait + 2000, `gap ${i + 1}: ${gap} ms`)
        }
        await until(async () => (await deliveries(server.service)).failed > before.failed, 15_000)
        const after = await deliveries(server.service)
        assert.equal(after.retry - before.retry, 3)
        assert.equal(after.failed - before.failed, 1)
        assert.equal(dead.received.length, 4, 'no fifth attempt')
      })
  })

  describe('on a short schedule', () => {
    let server: TestApp
    const receivers: Receiver[] = []
    before(async () => {
      server = await backend.start(
        { webhookAllowPrivate: true, jobTimeoutMs: 200, jobFactorBudgetMs: 30_000 },
        { webhooks: SHORT },
      )
    })
    after(async () => {
      await server.close()
      await Promise.all(receivers.map((r) => r.close()))
    })

    test('410 Gone stops the retries', async () => {
      const receiver = await startReceiver(() => 410)
      receivers.push(receiver)
      const before = await deliveries(server.service)
      await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: 7 }, webhook: receiver.url })
      await receiver.waitFor(1)
      await until(async () => (await deliveries(server.service)).failed > before.failed, 5000)
      await sleep(300)
      assert.equal(receiver.received.length, 1)
      assert.equal((await deliveries(server.service)).retry, before.retry)
    })

    test('a receiver that hangs holds only its own delivery: others go out meanwhile', async () => {
      const before = await deliveries(server.service)
      const hanging = await startReceiver(() => 'hang')
      const alive = await startReceiver(() => 204)
      receivers.push(hanging, alive)
      await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: 7 }, webhook: hanging.url })
      await hanging.waitFor(1)
      const others = []
      for (let i = 0; i < 5; i++) {
        others.push(
          await createJob(server.url, {
            algorithm: 'PrimeChecker',
            params: { number: 11 + i },
            webhook: alive.url,
          }),
        )
      }
      await alive.waitFor(5, 3000)
      assert.ok(hanging.received.length < 4, 'while the hanging receiver still has attempts to come')
      const delivered = new Set(alive.received.map((r) => (JSON.parse(r.body) as { job_id: string }).job_id))
      for (const other of others) assert.ok(delivered.has(other.json.job_id as string))
      // The hanging delivery runs out of attempts before the next test counts its own.
      await hanging.waitFor(4, 10_000)
      await until(async () => (await deliveries(server.service)).failed > before.failed, 10_000)
    })

    test('a redirect is not followed and counts as a failed attempt', async () => {
      const receiver = await startReceiver(() => 302)
      receivers.push(receiver)
      const before = await deliveries(server.service)
      await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: 7 }, webhook: receiver.url })
      const attempts = await receiver.waitFor(4)
      await until(async () => (await deliveries(server.service)).failed > before.failed, 5000)
      assert.ok(attempts.every((a) => a.headers.host?.startsWith('127.0.0.1')))
      assert.equal(receiver.received.length, 4, 'four attempts at the hook, none at the redirect target')
      const now = await deliveries(server.service)
      assert.equal(now.retry - before.retry, 3)
    })

    test('a failed job is delivered too, with its error and no result', async () => {
      const receiver = await startReceiver(() => 200)
      receivers.push(receiver)
      const created = await createJob(server.url, {
        algorithm: 'PrimeChecker',
        params: { number: RSA_100 },
        webhook: receiver.url,
      })
      const [attempt] = await receiver.waitFor(1)
      const payload = JSON.parse(attempt?.body ?? '')
      assert.deepEqual(Object.keys(payload), [
        'job_id',
        'status',
        'algorithm',
        'result',
        'error',
        'metadata',
        'completed_at',
      ])
      assert.equal(payload.job_id, created.json.job_id)
      assert.equal(payload.status, 'failed')
      assert.match(payload.error, /hard time limit/)
      assert.equal(payload.result, null)
      assert.equal(payload.metadata, null)
      assert.equal(attempt?.headers['webhook-signature'], undefined, 'no secret, no signature')
    })
  })

  describe('logs', () => {
    let server: TestApp
    let receiver: Receiver
    const lines: { msg: string; component?: string; webhook_id?: string }[] = []
    before(async () => {
      receiver = await startReceiver((n) => (n === 0 ? 500 : 410))
      const stream = { write: (line: string) => lines.push(JSON.parse(line)) }
      server = await backend.start(
        { webhookAllowPrivate: true, logLevel: 'info' },
        { webhooks: SHORT, logger: { level: 'info', stream } },
      )
    })
    after(async () => {
      await server.close()
      await receiver.close()
    })

    test("a delivery's log lines say component webhooks, as the alerts and docs expect", async () => {
      await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: 7 }, webhook: receiver.url })
      await until(() => lines.some((line) => line.msg === 'webhook given up'), 5000, 'the delivery given up')
      const delivery = lines.filter((line) => line.webhook_id !== undefined)
      assert.deepEqual(
        delivery.map((line) => [line.msg, line.component]),
        [
          ['webhook attempt failed', 'webhooks'],
          ['webhook given up', 'webhooks'],
        ],
      )
    })
  })

  describe('address rules', () => {
    let server: TestApp
    let receiver: Receiver
    let port: number
    // Names only this test knows, resolved by the service through its resolver seam.
    const lookups: string[] = []
    let rebindCalls = 0
    const resolve = async (hostname: string): Promise<LookupAddress[]> => {
      lookups.push(hostname)
      if (hostname === 'loopback.test') return [{ address: '127.0.0.1', family: 4 }]
      if (hostname === 'mixed.test') {
        return [
          { address: '93.184.216.34', family: 4 },
          { address: '127.0.0.1', family: 4 },
        ]
      }
      if (hostname === 'rebind.test') {
        // Public at the first look, loopback afterwards: a check on one lookup and a connection on
        // another would reach the receiver.
        rebindCalls++
        return [{ address: rebindCalls === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }]
      }
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    }
    before(async () => {
      receiver = await startReceiver(() => 200)
      port = Number(new URL(receiver.url).port)
      server = await backend.start({}, { webhooks: { ...SHORT, resolve } })
    })
    after(async () => {
      await server.close()
      await receiver.close()
    })

    test('literal private addresses and localhost are refused at creation with 400', async () => {
      for (const webhook of [
        receiver.url,
        `http://localhost:${port}/hook`,
        'http://[::1]/x',
        'http://192.168.0.10/x',
      ]) {
        const created = await createJob(server.url, {
          algorithm: 'PrimeChecker',
          params: { number: 7 },
          webhook,
        })
        assert.equal(created.status, 400, webhook)
        const detail = created.json.detail as { error: string; message: string; details: unknown }
        assert.equal(detail.error, 'VALIDATION_ERROR')
        assert.match(detail.message, /ALGOSERVE_WEBHOOK_ALLOW_PRIVATE/)
        assert.deepEqual(detail.details, { field: 'webhook', value: webhook })
      }
    })

    for (const name of ['loopback.test', 'mixed.test']) {
      test(`a name resolving to loopback (${name}) fails at delivery, without retries`, async () => {
        const before = await deliveries(server.service)
        const created = await createJob(server.url, {
          algorithm: 'PrimeChecker',
          params: { number: 7 },
          webhook: `http://${name}:${port}/hook`,
        })
        assert.equal(created.status, 202, 'names are accepted at creation')
        await until(async () => (await deliveries(server.service)).failed > before.failed, 5000)
        await sleep(300)
        const now = await deliveries(server.service)
        assert.equal(now.retry, before.retry, 'no retries')
        assert.equal(now.failed - before.failed, 1)
        assert.equal(receiver.received.length, 0, 'nothing reached the loopback receiver')
        assert.ok(lookups.includes(name))
        assert.equal((await waitForJob(server.url, created.json.job_id as string)).status, 'completed')
      })
    }

    test('the address connected to is the address checked (DNS rebinding)', async () => {
      const before = await deliveries(server.service)
      await createJob(server.url, {
        algorithm: 'PrimeChecker',
        params: { number: 7 },
        webhook: `http://rebind.test:${port}/hook`,
      })
      await until(async () => (await deliveries(server.service)).failed > before.failed, 10_000)
      assert.equal(receiver.received.length, 0, 'nothing reached the loopback receiver')
      // The first attempt went to the public address it checked (unreachable here) and failed; the
      // next one saw loopback and was refused.
      assert.ok(rebindCalls >= 2)
    })
  })
})

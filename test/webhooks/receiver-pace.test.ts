// Each receiver at its own pace (docs/webhooks.md#how-delivery-scales), on every job backend, with real
// receivers: one that answers at once and one after 50 ms get all their webhooks, the latter more at
// once than it started with, while a black hole, one that answers 500 and one that closes every connection
// hold their first attempts; the bad ones get fewer slots, and their retries keep the real schedule.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { INITIAL_RECEIVER_SLOTS, KEEP_IDLE_MS, ReceiverPace } from '../../src/webhooks/receiver-pace.js'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob } from '../helpers/jobs.js'
import { byDelivery, type Receiver, startReceiver } from '../helpers/receiver.js'
import { sleep } from '../helpers/time.js'

const BAD = 50
const HEALTHY = 100

/** Creates `count` jobs whose webhook goes to `receiver`, `batch` at a time. */
async function jobsTo(server: TestApp, receiver: Receiver, count: number, batch = 25): Promise<void> {
  for (let first = 0; first < count; first += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, count - first) }, (_, i) =>
        createJob(server.url, {
          algorithm: 'PrimeChecker',
          params: { number: first + i },
          webhook: receiver.url,
        }),
      ),
    )
  }
}

/** A gauge's value for one receiver in a /metrics text, or undefined when it has no series. */
function gauge(text: string, name: string, receiver: Receiver): number | undefined {
  const host = new URL(receiver.url).host
  const line = text.split('\n').find((l) => l.startsWith(`${name}{receiver="${host}"}`))
  return line === undefined ? undefined : Number(line.split(' ').pop())
}

forEachBackend((backend) => {
  let server: TestApp
  const receivers: Receiver[] = []
  before(async () => {
    // The real schedule and time limit: the black hole's first attempts last 10 s.
    server = await backend.start({ webhookAllowPrivate: true })
  })
  after(async () => {
    await server.close()
    await Promise.all(receivers.map((r) => r.close()))
  })

  test('healthy receivers get all their webhooks, many at once, beside a black hole, a 500 and a closer; the 500 gets 1 + 3 attempts at 1, 5 and 15 s', {
    timeout: 120_000,
  }, async (t) => {
    const blackHole = await startReceiver(() => 'hang')
    const failing = await startReceiver(() => 500)
    const closing = await startReceiver(() => 'close')
    const fast = await startReceiver(() => 204)
    // Its first attempts are held until all its deliveries are due, so that they wait for its slots.
    let open = () => {}
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const slow = await startReceiver((n) => ({ status: 204, after: n < INITIAL_RECEIVER_SLOTS ? gate : 50 }))
    receivers.push(blackHole, failing, closing, fast, slow)

    const started = Date.now()
    await Promise.all([
      jobsTo(server, blackHole, BAD),
      jobsTo(server, failing, BAD),
      jobsTo(server, closing, BAD),
    ])
    await Promise.all([jobsTo(server, fast, HEALTHY), jobsTo(server, slow, HEALTHY, HEALTHY)])
    await slow.waitFor(INITIAL_RECEIVER_SLOTS, 5000)
    open()
    // Before any of the black hole's attempts can end (10 s): nothing it holds delays these.
    await fast.waitFor(HEALTHY, 9000)
    await slow.waitFor(HEALTHY, 9000 - (Date.now() - started))
    assert.ok(Date.now() - started < 10_000, 'the healthy webhooks went out before the black hole let go')
    t.diagnostic(
      `most in flight: ${slow.mostInFlight} to the 50 ms receiver, ${fast.mostInFlight} to the other`,
    )
    assert.ok(
      slow.mostInFlight > INITIAL_RECEIVER_SLOTS,
      `the 50 ms receiver had at most ${slow.mostInFlight} attempts at once`,
    )
    assert.ok(
      blackHole.received.length <= INITIAL_RECEIVER_SLOTS,
      `${blackHole.received.length} attempts hang on the black hole`,
    )

    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    assert.equal(gauge(metrics, 'algoserve_webhook_receiver_in_flight', blackHole), blackHole.received.length)
    assert.equal(
      gauge(metrics, 'algoserve_webhook_receiver_slots', failing),
      1,
      'the 500 receiver is slowed down',
    )
    assert.ok((gauge(metrics, 'algoserve_webhook_receiver_failures', failing) ?? 0) > 0)

    // Every delivery to the 500 receiver and to the closer: 1 + 3 attempts, 1, 5 and 15 s apart.
    await failing.waitFor(BAD * 4, 60_000)
    await closing.waitFor(BAD * 4, 10_000)
    await sleep(1000)
    for (const receiver of [failing, closing]) {
      const deliveries = byDelivery(receiver.received)
      assert.equal(deliveries.size, BAD)
      for (const times of deliveries.values()) {
        assert.equal(times.length, 4)
        const gaps = times.slice(1).map((at, i) => at - (times[i] as number))
        for (const [i, wait] of [1000, 5000, 15_000].entries()) {
          const gap = gaps[i] as number
          assert.ok(gap >= wait - 50 && gap < wait + 2000, `wait ${i + 1}: ${gap} ms`)
        }
      }
    }
  })
})

test('a receiver keeps the slots it earned through an idle moment, and starts over once idle a while', async () => {
  let now = 0
  const pace = new ReceiverPace(128, () => now)
  const url = 'http://receiver.test:8080/hooks'
  const earned = 2 * INITIAL_RECEIVER_SLOTS
  /** Takes `count` slots at once; how many were in flight and waiting then; gives them back, answered. */
  const burst = async (count: number) => {
    const taken = Array.from({ length: count }, () => pace.take(url))
    const [state] = pace.states()
    for (const _ of taken) pace.release(url, 'answered', 1)
    assert.deepEqual(await Promise.all(taken), Array(count).fill(true))
    return [state?.inFlight, state?.waiting]
  }
  assert.deepEqual(await burst(earned), [INITIAL_RECEIVER_SLOTS, INITIAL_RECEIVER_SLOTS])
  assert.deepEqual(pace.states(), [], 'an idle receiver that answers is not shown')
  now += KEEP_IDLE_MS - 1
  assert.deepEqual(await burst(earned), [earned, 0], 'its slots are kept while it is idle')
  now += KEEP_IDLE_MS
  assert.deepEqual(await burst(earned), [INITIAL_RECEIVER_SLOTS, INITIAL_RECEIVER_SLOTS])
})

test('a receiver is full while its slots and waiting places are all taken, and is told when it has room', async () => {
  const pace = new ReceiverPace(2)
  const url = 'http://full.test/hooks'
  const freed: number[] = []
  pace.onFreed(() => freed.push(pace.full().length))
  const taken = [pace.take(url), pace.take(url), pace.take(url)]
  assert.deepEqual(pace.full(), [], 'one place still free')
  taken.push(pace.take(url))
  assert.equal(await pace.take('http://other.test/hooks'), true)
  assert.deepEqual(pace.full(), ['http://full.test'])
  assert.equal(await pace.take(url), false, 'no place left: the delivery is left where it was')
  pace.release(url, 'answered', 1)
  assert.deepEqual([pace.full(), freed], [[], [0]])
  for (const _ of taken.slice(1)) pace.release(url, 'answered', 1)
  assert.deepEqual(await Promise.all(taken), [true, true, true, true])
  assert.deepEqual(freed, [0], 'told once')
})

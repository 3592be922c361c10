// The webhook receiver gauges: one series per receiver with something going on, at most
// MAX_RECEIVER_SERIES named, the rest summed under receiver="other", and none left from a past scrape.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createMetrics } from '../../src/metrics/metrics.js'
import { MAX_RECEIVER_SERIES, OTHER_RECEIVERS } from '../../src/metrics/receiver-metrics.js'
import type { ReceiverState } from '../../src/webhooks/receiver-pace.js'

const receiver = (i: number, inFlight: number): ReceiverState => ({
  host: `r${i}.example:443`,
  inFlight,
  waiting: 0,
  limit: 8,
  failures: 1,
})

async function series(metrics: ReturnType<typeof createMetrics>, name: string) {
  const metric = await metrics.registry.getSingleMetric(name)?.get()
  return new Map(metric?.values.map((v) => [v.labels.receiver as string, v.value]))
}

test('the busiest receivers are named, the rest summed as other; a receiver gone leaves no series', async () => {
  const metrics = createMetrics()
  let states = Array.from({ length: MAX_RECEIVER_SERIES + 5 }, (_, i) => receiver(i, i + 1))
  metrics.showReceivers(() => states)
  const inFlight = await series(metrics, 'algoserve_webhook_receiver_in_flight')
  assert.equal(inFlight.size, MAX_RECEIVER_SERIES + 1)
  // The five least busy (1 to 5 in flight) are summed.
  assert.equal(inFlight.get(OTHER_RECEIVERS), 1 + 2 + 3 + 4 + 5)
  assert.equal(inFlight.get(`r${MAX_RECEIVER_SERIES + 4}.example:443`), MAX_RECEIVER_SERIES + 5)
  const slots = await series(metrics, 'algoserve_webhook_receiver_slots')
  assert.equal(slots.size, MAX_RECEIVER_SERIES, 'slots are not summed')
  states = [receiver(0, 3)]
  const after = await series(metrics, 'algoserve_webhook_receiver_in_flight')
  assert.deepEqual([...after], [['r0.example:443', 3]])
})

// Each webhook receiver's pace in this process (webhooks/receiver-pace.ts), read at each scrape: its
// attempts in flight or waiting, its slots, and its failures since its last answer. Only the receivers
// with the most going on get a series of their own; the rest are summed under `receiver="other"`, so
// the label count stays bounded whatever the jobs' URLs.
import { Gauge, type Registry } from 'prom-client'
import type { ReceiverState } from '../webhooks/receiver-pace.js'

/** Receivers shown by name at most. */
export const MAX_RECEIVER_SERIES = 20
export const OTHER_RECEIVERS = 'other'

export type ReceiverSource = () => ReceiverState[]

/** Registers the gauges; the returned function sets where they read. */
export function registerReceiverMetrics(registers: Registry[]): (source: ReceiverSource) => void {
  let source: ReceiverSource = () => []
  // Of several HTTP processes, the attempts and slots add up; the failures since a last answer do not.
  const gauge = (
    name: string,
    help: string,
    value: (r: ReceiverState) => number,
    summed: boolean,
    aggregator: 'sum' | 'max' = 'sum',
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['receiver'] as const,
      registers,
      aggregator,
      collect() {
        this.reset()
        const states = source().sort((a, b) => busy(b) - busy(a) || b.failures - a.failures)
        const values = new Map<string, number>()
        for (const [i, state] of states.entries()) {
          if (i < MAX_RECEIVER_SERIES) values.set(state.host, (values.get(state.host) ?? 0) + value(state))
          else if (summed) values.set(OTHER_RECEIVERS, (values.get(OTHER_RECEIVERS) ?? 0) + value(state))
        }
        for (const [receiver, v] of values) this.set({ receiver }, v)
      },
    })
  gauge(
    'algoserve_webhook_receiver_in_flight',
    'Webhook attempts in flight to a receiver (host:port) from this process.',
    (r) => r.inFlight,
    true,
  )
  gauge(
    'algoserve_webhook_receiver_waiting',
    "Webhook deliveries waiting in this process for one of a receiver's slots.",
    (r) => r.waiting,
    true,
  )
  gauge(
    'algoserve_webhook_receiver_slots',
    'Webhook attempts a receiver may have in flight from this process now: fewer while it fails.',
    (r) => r.limit,
    false,
  )
  gauge(
    'algoserve_webhook_receiver_failures',
    'Failed webhook attempts (no answer, 5xx or 429) to a receiver since its last answer.',
    (r) => r.failures,
    true,
    'max',
  )
  return (next) => {
    source = next
  }
}

const busy = (r: ReceiverState) => r.inFlight + r.waiting

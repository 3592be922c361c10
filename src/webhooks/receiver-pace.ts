// How many attempts each receiver (scheme, credentials, host and port of a webhook URL) gets in flight at
// once, in this process (docs/webhooks.md#how-delivery-scales). A receiver that answers gets one more slot
// per answer, up to the cap, so a healthy one gets as many as it keeps up with; one that times out,
// refuses connections or answers 5xx or 429 has its slots halved at each such failure, down to one. A few
// deliveries may wait here for a slot, handed over the moment one is given back; beyond them a delivery
// is left where it was (its backend retakes it when the receiver has room again), so a receiver that
// hangs holds a bounded number of the process's slots and never delays another receiver.

import type { AttemptDelivery } from './attempt.js'
import type { AttemptResult } from './sender.js'

/** How an attempt ended, for the pace of its receiver. */
export type PaceOutcome = 'answered' | 'failed' | 'none'

/** One receiver's state, as the metrics show it. */
export interface ReceiverState {
  /** Host and port of the receiver. */
  host: string
  inFlight: number
  /** Deliveries waiting here for one of its slots. */
  waiting: number
  /** Attempts it may have in flight now. */
  limit: number
  /** Failures since its last answer. */
  failures: number
}

interface Receiver {
  host: string
  inFlight: number
  limit: number
  failures: number
  waiters: (() => void)[]
  /** Average attempt time (ms), recent attempts weighing most. */
  averageMs: number
  /** When its last attempt in flight ended (the clock's ms). */
  idleSince: number
}

/** The default of the most attempts one receiver has in flight (ALGOSERVE_WEBHOOK_RECEIVER_MAX_IN_FLIGHT). */
export const DEFAULT_RECEIVER_MAX_IN_FLIGHT = 128

/** Slots a receiver starts with, before any answer, and after its state is forgotten. */
export const INITIAL_RECEIVER_SLOTS = 16
const AVERAGE_WEIGHT = 0.2
const FIRST_AVERAGE_MS = 100
/** States kept at most; idle ones beyond it are forgotten. */
const MAX_KEPT = 10_000
/**
 * How long a receiver that answers keeps its slots while idle: through the gaps of bursty traffic (a
 * receiver reset to its first slots at each gap would turn deliveries away that it keeps up with).
 */
export const KEEP_IDLE_MS = 60_000

export class ReceiverPace {
  readonly #max: number
  readonly #initial: number
  readonly #receivers = new Map<string, Receiver>()
  readonly #freed: (() => void)[] = []
  readonly #now: () => number
  /** The receivers full now, kept as they fill and empty: idle ones are many, and not looked at. */
  readonly #fullKeys = new Set<string>()

  /** `maxPerReceiver`: the most attempts one receiver has in flight; `now`: the clock, in ms. */
  constructor(
    maxPerReceiver = DEFAULT_RECEIVER_MAX_IN_FLIGHT,
    now: () => number = performance.now.bind(performance),
  ) {
    this.#max = maxPerReceiver
    this.#now = now
    this.#initial = Math.min(INITIAL_RECEIVER_SLOTS, maxPerReceiver)
  }

  /** Calls `listener` each time a receiver that was full has room again. */
  onFreed(listener: () => void): void {
    this.#freed.push(listener)
  }

  /**
   * Takes a slot for `url`'s receiver: at once when it has one free (true), after a wait here when
   * only a few wait for it already (true), or not (false: its backend should leave the delivery to be
   * taken again once the receiver has room).
   */
  async take(url: string): Promise<boolean> {
    const key = receiverOf(url)
    const receiver = this.#receiver(key, url)
    if (receiver.inFlight < receiver.limit) {
      receiver.inFlight++
      this.#track(key, receiver)
      return true
    }
    if (receiver.waiters.length >= receiver.limit) return false
    // The slot is handed over by `release`, still counted in flight.
    const handedOver = new Promise<void>((resolve) => receiver.waiters.push(resolve))
    this.#track(key, receiver)
    await handedOver
    return true
  }

  /** Gives back a slot `take` gave, after an attempt that took `durationMs` and came to `outcome`. */
  release(url: string, outcome: PaceOutcome, durationMs: number): void {
    const key = receiverOf(url)
    const receiver = this.#receivers.get(key)
    if (receiver === undefined) return
    if (outcome === 'answered') {
      receiver.failures = 0
      receiver.limit = Math.min(this.#max, receiver.limit + 1)
    } else if (outcome === 'failed') {
      receiver.failures++
      receiver.limit = Math.max(1, Math.floor(receiver.limit / 2))
    }
    if (outcome !== 'none') {
      receiver.averageMs += (durationMs - receiver.averageMs) * AVERAGE_WEIGHT
    }
    const next = receiver.inFlight <= receiver.limit ? receiver.waiters.shift() : undefined
    if (next !== undefined) next()
    else receiver.inFlight--
    if (receiver.inFlight === 0) receiver.idleSince = this.#now()
    this.#track(key, receiver)
  }

  /**
   * Runs `work` with a slot of `url`'s receiver that `take` gave, and gives it back after: `work` sends
   * through the `send` it is handed, so that the attempt's outcome sets the receiver's pace.
   */
  async hold<T>(url: string, send: AttemptDelivery, work: (send: AttemptDelivery) => Promise<T>): Promise<T> {
    let outcome: PaceOutcome = 'none'
    let durationMs = 0
    const paced: AttemptDelivery = async (message, signal) => {
      const started = performance.now()
      const result = await send(message, signal)
      durationMs = performance.now() - started
      outcome = paceOutcome(result)
      return result
    }
    try {
      return await work(paced)
    } finally {
      this.release(url, outcome, durationMs)
    }
  }

  /** Receivers whose slots and waiting places are all taken: deliveries to them are not taken now. */
  full(): string[] {
    return [...this.#fullKeys]
  }

  /** About how long until `url`'s receiver has a slot again (its recent attempt time). */
  retakeDelayMs(url: string): number {
    return Math.round(this.#receivers.get(receiverOf(url))?.averageMs ?? FIRST_AVERAGE_MS)
  }

  /** Every receiver with something in flight, waiting or failed. */
  states(): ReceiverState[] {
    this.#forgetStale()
    const active = [...this.#receivers.values()].filter((r) => r.inFlight > 0 || r.failures > 0)
    return active.map((r) => ({
      host: r.host,
      inFlight: r.inFlight,
      waiting: r.waiters.length,
      limit: r.limit,
      failures: r.failures,
    }))
  }

  /** Keeps the set of full receivers up to date after `receiver` changed; tells when it has room again. */
  #track(key: string, receiver: Receiver): void {
    if (this.#full(receiver)) this.#fullKeys.add(key)
    else if (this.#fullKeys.delete(key)) for (const listener of this.#freed) listener()
  }

  #full(receiver: Receiver): boolean {
    return receiver.inFlight >= receiver.limit && receiver.waiters.length >= receiver.limit
  }

  #receiver(key: string, url: string): Receiver {
    let receiver = this.#receivers.get(key)
    if (receiver === undefined) {
      if (this.#receivers.size >= MAX_KEPT) this.#forgetIdle()
      receiver = {
        host: hostOf(url),
        inFlight: 0,
        limit: this.#initial,
        failures: 0,
        waiters: [],
        averageMs: FIRST_AVERAGE_MS,
        idleSince: 0,
      }
      this.#receivers.set(key, receiver)
    } else if (this.#stale(receiver)) {
      receiver.limit = this.#initial
    }
    return receiver
  }

  /** Forgets every idle receiver, failing ones too: when the states are too many. */
  #forgetIdle(): void {
    for (const [key, receiver] of this.#receivers) if (receiver.inFlight === 0) this.#receivers.delete(key)
  }

  #forgetStale(): void {
    for (const [key, receiver] of this.#receivers) if (this.#stale(receiver)) this.#receivers.delete(key)
  }

  /** Healthy and idle for KEEP_IDLE_MS: as good as unknown. */
  #stale(receiver: Receiver): boolean {
    return (
      receiver.inFlight === 0 && receiver.failures === 0 && this.#now() - receiver.idleSince >= KEEP_IDLE_MS
    )
  }
}

/**
 * An answer counts for the receiver unless it is a 5xx or a 429 (it is overloaded or failing); no
 * answer (a time-out, a refused or reset connection) counts against it; an attempt refused by the
 * address rule or cut short by a shutdown does not count.
 */
export function paceOutcome(result: AttemptResult): PaceOutcome {
  switch (result.kind) {
    case 'success':
    case 'gone':
      return 'answered'
    case 'failure':
      return result.statusCode !== undefined && result.statusCode < 500 && result.statusCode !== 429
        ? 'answered'
        : 'failed'
    case 'refused':
    case 'aborted':
      return 'none'
  }
}

/**
 * The receiver a URL names: its text up to the path (scheme, credentials, host and port), so that a
 * store can match the URLs it holds by prefix; a URL that does not parse is its own.
 */
export function receiverOf(url: string): string {
  const start = url.indexOf('//')
  if (start < 0) return url
  const path = url.indexOf('/', start + 2)
  return path < 0 ? url : url.slice(0, path)
}

function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return 'unknown'
  }
}

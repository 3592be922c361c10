// The `progress` of a run's context (RunContext), on the run's own thread. An algorithm may call it in
// a loop, so a call must cost next to nothing: most calls only store the update and read the clock
// (Date.now(), about 40 ns), and few leave the thread.
//
// The rule: the first update is sent at once; after a sent update, the next goes no sooner than
// PROGRESS_SEND_INTERVAL_MS later, and updates in between replace one another. The one still held when the
// interval ends is sent at the next call or by a timer (for a run that waits), whichever comes first, and
// the run's end sends it too: the last update always arrives, and a receiver gets at most about
// 1000 / PROGRESS_SEND_INTERVAL_MS + 1 updates a second, whatever the algorithm calls.

import type { Progress } from './run-way.js'

/** The least time between two updates sent from a run's thread, in ms. */
export const PROGRESS_SEND_INTERVAL_MS = 50

/** The progress of runs nobody follows (inline runs, /invoke calls): it does nothing. */
export const ignoreProgress: Progress = () => {}

/** An update as sent from the run's thread: the fraction, then the message or null. */
export type ProgressUpdate = [fraction: number, message: string | null]

export class ProgressThrottle {
  readonly #send: (update: ProgressUpdate) => void
  /** The Date.now() from which an update may be sent at once. */
  #nextSendAt = 0
  #held = false
  #fraction = 0
  #message: string | null = null
  #timer: NodeJS.Timeout | undefined
  #ended = false

  constructor(send: (update: ProgressUpdate) => void) {
    this.#send = send
  }

  /** The run's `progress`: checks its arguments (never throws into the algorithm), then sends or holds. */
  readonly report: Progress = (fraction: unknown, message?: unknown): void => {
    if (typeof fraction !== 'number' || !Number.isFinite(fraction)) return
    this.#fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction
    // A message that is not a string is left out; the fraction still counts.
    this.#message = typeof message === 'string' ? message : null
    this.#held = true
    const now = Date.now()
    // A clock set back by more than the interval does not hold the updates until it catches up.
    if (now >= this.#nextSendAt || now < this.#nextSendAt - PROGRESS_SEND_INTERVAL_MS) this.#sendHeld(now)
  }

  /** Sends the held update, if any: at the run's end, before its result leaves the thread. */
  end(): void {
    this.#sendHeld(Date.now())
    clearTimeout(this.#timer)
    this.#ended = true
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined
    this.#sendHeld(Date.now())
  }

  #sendHeld(now: number): void {
    // The held update supersedes whatever the timer was set for.
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#ended || !this.#held) return
    this.#held = false
    this.#nextSendAt = now + PROGRESS_SEND_INTERVAL_MS
    this.#send([this.#fraction, this.#message])
    // For a run that waits: what its calls leave held within the interval is sent when the interval ends.
    this.#timer = setTimeout(this.#onTimer, PROGRESS_SEND_INTERVAL_MS).unref()
  }
}

/**
 * Calls the caller's hook with an update from a run's thread. A hook that throws fails neither the run
 * nor the service: the executor has no log of its own, and the hook's owner (the job runner) logs the
 * failures of its own code.
 */
export function tellProgress(hook: Progress, [fraction, message]: ProgressUpdate): void {
  try {
    if (message === null) hook(fraction)
    else hook(fraction, message)
  } catch {
    // Ignored, as said above: the run goes on.
  }
}

// The `progress` of a run's context (RunContext), on the run's own thread. An algorithm may call it in
// its innermost loop, so a call must cost next to nothing: most calls only store the update, and few
// leave the thread.
//
// The rule: the first update is sent at once; after a sent update, the next goes no sooner than
// PROGRESS_INTERVAL_MS later, and updates in between replace one another. The one still held when the
// interval ends is sent then (by a timer, for a run that waits) or at its next call, whichever comes
// first, and the run's end sends it too (flush): the last update always arrives, and a receiver gets at
// most about 1000 / PROGRESS_INTERVAL_MS + 1 updates a second, whatever the algorithm calls.

import type { Progress } from './algorithm-process.js'

/** The least time between two updates sent from a run's thread, in ms. */
export const PROGRESS_INTERVAL_MS = 50

/** The progress of runs nobody follows (inline runs, /invoke calls): it does nothing. */
export const ignoreProgress: Progress = () => {}

/** An update as sent from the run's thread: the fraction, then the message or null. */
export type ProgressUpdate = [fraction: number, message: string | null]

export class ProgressThrottle {
  readonly #send: (update: ProgressUpdate) => void
  /** The performance.now() from which an update may be sent at once. */
  #nextSendAt = 0
  #held: ProgressUpdate | undefined
  #timer: NodeJS.Timeout | undefined
  #ended = false

  constructor(send: (update: ProgressUpdate) => void) {
    this.#send = send
  }

  /** The run's `progress`: checks its arguments (never throws into the algorithm), then sends or holds. */
  readonly report: Progress = (fraction: unknown, message?: unknown): void => {
    if (this.#ended || typeof fraction !== 'number' || !Number.isFinite(fraction)) return
    // A message that is not a string is left out; the fraction still counts.
    const update: ProgressUpdate = [
      fraction < 0 ? 0 : fraction > 1 ? 1 : fraction,
      typeof message === 'string' ? message : null,
    ]
    const now = performance.now()
    if (now >= this.#nextSendAt) {
      this.#held = undefined
      this.#sendNow(update, now)
      return
    }
    this.#held = update
    // One timer per interval at most: it sends what is held then, should the run not call again.
    this.#timer ??= setTimeout(() => this.#sendHeld(), this.#nextSendAt - now).unref()
  }

  /** Sends the held update, if any: at the run's end, before its result leaves the thread. */
  end(): void {
    this.#sendHeld()
    this.#ended = true
  }

  #sendHeld(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const held = this.#held
    if (held === undefined) return
    this.#held = undefined
    this.#sendNow(held, performance.now())
  }

  #sendNow(update: ProgressUpdate, now: number): void {
    // Whatever was held is superseded by this update: its timer would send the next one early.
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#nextSendAt = now + PROGRESS_INTERVAL_MS
    this.#send(update)
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

// A receiver's share of the delivery slots: at most a share of the attempts in flight go to one
// receiver (origin: scheme, host and port), so that one that hangs or fails cannot hold every slot while
// another receiver's delivery waits. Counted per process: each process's slots are shared out alike.
// Every backend's delivery loop holds one.

/** How long a delivery whose receiver has its share in flight waits before it is taken again. */
export const SHARE_DEFER_MS = 1000

export class OriginShare {
  readonly #max: number
  readonly #sending = new Map<string, number>()

  /** For a process with `maxInFlight` slots: a sixteenth of them per receiver, at least one. */
  constructor(maxInFlight: number) {
    this.#max = Math.max(1, Math.floor(maxInFlight / 16))
  }

  /** Takes a slot for `url`'s receiver, or answers false when it has its share in flight. */
  take(url: string): boolean {
    const origin = originOf(url)
    const sending = this.#sending.get(origin) ?? 0
    if (sending >= this.#max) return false
    this.#sending.set(origin, sending + 1)
    return true
  }

  /** Gives back a slot `take` gave. */
  release(url: string): void {
    const origin = originOf(url)
    const sending = (this.#sending.get(origin) ?? 1) - 1
    if (sending > 0) this.#sending.set(origin, sending)
    else this.#sending.delete(origin)
  }
}

/** The receiver a URL names: its origin; a URL that does not parse is its own. */
function originOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return url
  }
}

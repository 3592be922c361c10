// Clients waiting for a job to end (GET /jobs/{job_id}?wait=): held in a map by job id and woken by
// the backend's one "a job may have ended" subscription, so a waiting client costs a map entry and a
// timer, never a loop of its own. At most `max` are held at once.
export interface Hold {
  /** Resolves at the next signal for this job. */
  next(): Promise<void>
  release(): void
}

export class EndWaits {
  readonly #byId = new Map<string, Set<() => void>>()
  readonly #max: number
  #held = 0

  constructor(max: number) {
    this.#max = max
  }

  get held(): number {
    return this.#held
  }

  /** Wakes the waiters of `id`, if any. */
  signal(id: string): void {
    const wakers = this.#byId.get(id)
    if (wakers === undefined) return
    for (const wake of [...wakers]) wake()
  }

  /** Holds a wait on `id`, or returns null when `max` are held already. */
  hold(id: string): Hold | null {
    if (this.#held >= this.#max) return null
    this.#held++
    let wakers = this.#byId.get(id)
    if (wakers === undefined) {
      wakers = new Set()
      this.#byId.set(id, wakers)
    }
    const set = wakers
    let current: (() => void) | undefined
    let released = false
    return {
      next: () =>
        new Promise<void>((resolve) => {
          if (current !== undefined) set.delete(current)
          const wake = () => {
            set.delete(wake)
            resolve()
          }
          current = wake
          set.add(wake)
        }),
      release: () => {
        if (released) return
        released = true
        this.#held--
        if (current !== undefined) {
          set.delete(current)
          current()
        }
        if (set.size === 0 && this.#byId.get(id) === set) this.#byId.delete(id)
      },
    }
  }
}

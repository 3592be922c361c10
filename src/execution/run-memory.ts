// The memory limit of a module's run (its algorithm's memoryMb), watched on the run's own thread. A
// worker thread runs one call at a time, so what its isolate gains during a run is the run's: its V8
// heap in use (garbage not yet collected included) and its external memory (Buffers, ArrayBuffers).
// The thread's JavaScript cannot be interrupted: the watch looks every MEMORY_CHECK_MS while the run
// waits (an await, a timer) and once as it ends, so a run that allocates without ever waiting is seen
// only at its end. Native memory outside V8's accounting (an addon's own) is not seen at all.
import { getHeapStatistics } from 'node:v8'

/** How often the memory of a run that waits is looked at, in ms. */
export const MEMORY_CHECK_MS = 20

/** The failure of a run past its memory limit, in the algorithm's words as a client reads them. */
export class MemoryLimitFailure extends Error {
  constructor(limitMb: number, usedMb: number) {
    super(`its run passed its memory limit of ${limitMb} MB (it held ${Math.ceil(usedMb)} MB more)`)
  }
}

const heldBytes = (): number => {
  const { used_heap_size, external_memory } = getHeapStatistics()
  return used_heap_size + external_memory
}

export class MemoryWatch {
  readonly #limitMb: number
  readonly #baseline = heldBytes()
  readonly #timer: NodeJS.Timeout
  /** Settles with the failure once the run is seen past its limit while it waits. */
  readonly passed: Promise<MemoryLimitFailure>

  constructor(limitMb: number) {
    this.#limitMb = limitMb
    let fail: (failure: MemoryLimitFailure) => void = () => {}
    this.passed = new Promise((resolve) => {
      fail = resolve
    })
    this.#timer = setInterval(() => {
      const failure = this.check()
      if (failure !== undefined) fail(failure)
    }, MEMORY_CHECK_MS)
  }

  /** The failure when the run holds more than its limit now; otherwise undefined. */
  check(): MemoryLimitFailure | undefined {
    const usedMb = (heldBytes() - this.#baseline) / 2 ** 20
    return usedMb > this.#limitMb ? new MemoryLimitFailure(this.#limitMb, usedMb) : undefined
  }

  end(): void {
    clearInterval(this.#timer)
  }
}

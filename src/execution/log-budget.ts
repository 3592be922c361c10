// How much of what an algorithm's program writes reaches the log: at most so many lines and bytes a
// second per algorithm, whatever the program writes, so that a program printing in a loop neither fills
// the disk nor holds the event loop in the logger. What is over is counted, and said in one line at the
// end of its second.
import type { FastifyBaseLogger } from 'fastify'

/** The stderr lines of one algorithm logged in a second, all its processes together. */
export const STDERR_LINES_PER_SECOND = 100
/** The bytes of those lines, in a second. */
export const STDERR_BYTES_PER_SECOND = 64 * 1024
const INTERVAL_MS = 1000

export interface LogLimits {
  linesPerSecond: number
  bytesPerSecond: number
}

export class LogBudget {
  #windowStart = Number.NEGATIVE_INFINITY
  #lines = 0
  #bytes = 0
  #droppedLines = 0
  #droppedBytes = 0
  #summary: NodeJS.Timeout | undefined

  /** `what`: what is logged, for the summary line ("stderr", ...). */
  constructor(
    private readonly algorithm: string,
    private readonly what: string,
    private readonly log: FastifyBaseLogger,
    private readonly limits: LogLimits = {
      linesPerSecond: STDERR_LINES_PER_SECOND,
      bytesPerSecond: STDERR_BYTES_PER_SECOND,
    },
  ) {}

  /** Whether a line of `bytes` may be logged now; when not, it is counted for the summary. */
  take(bytes: number): boolean {
    const now = Date.now()
    if (now - this.#windowStart >= INTERVAL_MS) {
      this.#windowStart = now
      this.#lines = 0
      this.#bytes = 0
    }
    if (this.#lines < this.limits.linesPerSecond && this.#bytes + bytes <= this.limits.bytesPerSecond) {
      this.#lines++
      this.#bytes += bytes
      return true
    }
    this.#droppedLines++
    this.#droppedBytes += bytes
    this.#summary ??= setTimeout(() => this.flush(), this.#windowStart + INTERVAL_MS - now)
    return false
  }

  /** Logs what was dropped and not said yet; at the end of each second, and at a shutdown. */
  flush(): void {
    clearTimeout(this.#summary)
    this.#summary = undefined
    if (this.#droppedLines === 0) return
    const lines = this.#droppedLines
    const bytes = this.#droppedBytes
    this.#droppedLines = 0
    this.#droppedBytes = 0
    this.log.warn(
      { algorithm: this.algorithm, dropped_lines: lines, dropped_bytes: bytes },
      `dropped ${lines} lines, ${bytes} bytes of ${this.what} from '${this.algorithm}' in the last second`,
    )
  }
}

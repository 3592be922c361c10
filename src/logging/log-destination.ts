// Where pino's lines go: stdout, written asynchronously in batches. sonic-boom (pino's destination) does the
// writing, with its handling of slow and non-blocking pipes; the batching is done here because sonic-boom's
// own (minLength) appends each line to a string and measures that string's UTF-8 length on every write,
// flattening it each time. With one access line per request, the service scavenged its young generation
// 24.1 times per 1000 small /invoke requests through sonic-boom's batching, 20.8 through this one, and 18.4
// with no access line (docs/benchmarks/invoke.md).
import pino from 'pino'

export interface LogDestination {
  /** pino's stream interface: whole serialised lines, one or (handed to the sink) several. */
  write(line: string): void
  /** Writes out every line taken so far before returning; for the last lines before an exit. */
  flushSync(): void
}

export interface BatchedLinesOptions {
  /**
   * Lines are handed over once this many characters have gathered. Larger batches make fewer writes, but
   * their lines outlive the young generation and cost more in garbage collection (docs/benchmarks/invoke.md).
   */
  batchChars?: number
  /** ...or after this many ms, so that a quiet service's lines still appear. */
  flushMs?: number
}

export class BatchedLines implements LogDestination {
  readonly #sink: LogDestination
  readonly #batchChars: number
  #lines: string[] = []
  #chars = 0

  constructor(sink: LogDestination, options: BatchedLinesOptions = {}) {
    this.#sink = sink
    this.#batchChars = options.batchChars ?? 4096
    setInterval(() => this.#handOver(), options.flushMs ?? 250).unref()
  }

  write(line: string): void {
    this.#lines.push(line)
    this.#chars += line.length
    if (this.#chars >= this.#batchChars) this.#handOver()
  }

  /**
   * Writes out every line taken before returning: what the sink holds, then the lines still here, through
   * `last` when given (a synchronous destination, for an exit: the sink's asynchronous write of them would
   * be left to a thread that the exit does not wait for).
   */
  flushSync(last: LogDestination = this.#sink): void {
    this.#sink.flushSync()
    this.#handOver(last)
    last.flushSync()
  }

  #handOver(to: LogDestination = this.#sink): void {
    if (this.#lines.length === 0) return
    const text = this.#lines.join('')
    this.#lines = []
    this.#chars = 0
    to.write(text)
  }
}

/**
 * The service's log destination: batched lines to file descriptor 1, written without blocking. Node emits
 * 'exit' at every end short of a signal (process.exit, a crash, an empty event loop): the lines taken
 * are written out then, synchronously. A SIGKILL loses the lines not yet written (docs/metrics.md, logs).
 */
export function stdoutDestination(): LogDestination {
  const lines = new BatchedLines(pino.destination({ dest: 1, sync: false }))
  process.on('exit', () => lines.flushSync(pino.destination({ dest: 1, sync: true })))
  return lines
}

// Where pino's lines go: stdout, written asynchronously in batches. sonic-boom (pino's destination) does the
// writing, with its handling of slow and non-blocking pipes. The batching is done here, into a buffer outside
// V8's heap: each line is copied in as it is written and then left to the young generation, so a large batch
// costs the garbage collector nothing, and each hand-over (a write on libuv's thread pool, with its wake-ups)
// is shared by hundreds of lines. Batches of strings outlived the 1 MB young generation once they held more
// than about 4 KB (docs/benchmarks/invoke.md).
import pino from 'pino'

/** pino's stream interface: whole serialised lines, one or several. */
export interface LogDestination {
  write(line: string): void
  /** Writes out every line taken so far before returning; for the last lines before an exit. */
  flushSync(): void
}

/**
 * Where batches go: sonic-boom in its buffer mode, which keeps each buffer until it is written and then says
 * how many bytes it wrote ('write').
 */
export interface BatchSink {
  write(batch: Buffer): void
  flushSync(): void
  on(event: 'write', listener: (bytes: number) => void): unknown
}

export interface BatchedLinesOptions {
  /** Lines are handed over once this many bytes have gathered. */
  batchBytes?: number
  /** ...or after this many ms, so that a quiet service's lines still appear. */
  flushMs?: number
}

/**
 * Buffers followed while the sink writes them, and kept once written for the next batches; any more are made
 * while the sink is slow, and left to the garbage collector.
 */
const TRACKED_BATCHES = 4
const SPARE_BATCHES = 2

/** UTF-8 takes at most 3 bytes for each UTF-16 code unit of a string. */
const MAX_BYTES_PER_UNIT = 3

export class BatchedLines implements LogDestination {
  readonly #sink: BatchSink
  readonly #batchBytes: number
  #batch: Buffer
  #used = 0
  /**
   * Bytes handed to the sink, and bytes it says it wrote: a batch's buffer is free once both pass its end.
   */
  #handed = 0
  #written = 0
  /** The buffers the sink holds, in its order; a few, so that a sink that stopped writing holds no more. */
  readonly #writing: { buffer: Buffer; end: number }[] = []
  readonly #spare: Buffer[] = []

  constructor(sink: BatchSink, options: BatchedLinesOptions = {}) {
    this.#sink = sink
    this.#batchBytes = options.batchBytes ?? 64 * 1024
    this.#batch = Buffer.allocUnsafeSlow(this.#batchBytes)
    sink.on('write', (bytes) => this.#onWritten(bytes))
    setInterval(() => this.#handOver(), options.flushMs ?? 250).unref()
  }

  write(line: string): void {
    // The exact length is worked out only for a line that may not fit.
    if (this.#used + line.length * MAX_BYTES_PER_UNIT > this.#batchBytes) {
      const bytes = Buffer.byteLength(line)
      if (this.#used + bytes > this.#batchBytes) this.#handOver()
      if (bytes > this.#batchBytes) {
        this.#handed += bytes
        this.#sink.write(Buffer.from(line))
        return
      }
    }
    this.#used += this.#batch.write(line, this.#used)
    if (this.#used >= this.#batchBytes) this.#handOver()
  }

  /**
   * Writes out every line taken before returning: what the sink holds, then the lines still here, through
   * `last` when given (a synchronous destination, for an exit: the sink's asynchronous write of them would
   * be left to a thread that the exit does not wait for).
   */
  flushSync(last: BatchSink = this.#sink): void {
    this.#sink.flushSync()
    this.#handOver(last)
    last.flushSync()
  }

  #handOver(to: BatchSink = this.#sink): void {
    if (this.#used === 0) return
    const batch = this.#batch.subarray(0, this.#used)
    if (to === this.#sink) {
      this.#handed += this.#used
      if (this.#writing.length < TRACKED_BATCHES)
        this.#writing.push({ buffer: this.#batch, end: this.#handed })
    }
    // The sink keeps the buffer until it is written: the next lines go to another.
    this.#batch = this.#spare.pop() ?? Buffer.allocUnsafeSlow(this.#batchBytes)
    this.#used = 0
    to.write(batch)
  }

  #onWritten(bytes: number): void {
    this.#written += bytes
    while ((this.#writing[0]?.end ?? Number.POSITIVE_INFINITY) <= this.#written) {
      const { buffer } = this.#writing.shift() as { buffer: Buffer }
      if (this.#spare.length < SPARE_BATCHES) this.#spare.push(buffer)
    }
  }
}

/** sonic-boom on a file descriptor or a file, taking buffers. */
export const batchSink = (dest: number | string, sync: boolean): BatchSink =>
  pino.destination({ dest, sync, contentMode: 'buffer', mkdir: true }) as unknown as BatchSink

/**
 * The service's log destination: batched lines to file descriptor 1, written without blocking. Node emits
 * 'exit' at every end short of a signal (process.exit, a crash, an empty event loop): the lines taken
 * are written out then, synchronously. A SIGKILL loses the lines not yet written (docs/metrics.md, logs).
 */
export function stdoutDestination(): LogDestination {
  const lines = new BatchedLines(batchSink(1, false))
  process.on('exit', () => lines.flushSync(batchSink(1, true)))
  return lines
}

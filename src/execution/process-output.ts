// A process's stdout read into messages, in order, without the thread that serves HTTP paying for a long
// line: lines are cut with the engine's byte search, a short line (the common answer of a few hundred
// bytes) is parsed here at once, and a long one is moved to the output thread (output-thread.ts), which
// parses it, checks a result against its schema and hands back the result's JSON as bytes. Each kind of
// line has its limit (OutputLimits): a line past it fails the call, and its bytes past the limit are
// dropped as they arrive, never kept.
import { LineKindScanner } from './line-kind.js'
import { outputThread } from './output-thread.js'
import type { LineRead } from './output-worker.js'
import {
  limitOf,
  type OutputLimits,
  oversized,
  type ProcessMessage,
  ProtocolError,
  ResultJson,
  readMessage,
} from './process-protocol.js'

/**
 * Lines up to this long are parsed on the main thread: lossless-json reads about 20 MB/s, so such a line
 * costs a fraction of a millisecond, less than the round trip to the thread would add.
 */
export const INLINE_LINE_BYTES = 8 * 1024

export type OutputRead = ProcessMessage | ProtocolError

/** A line read, or being read on the output thread; delivered once those before it are. */
interface Slot {
  read: OutputRead | undefined
}

export class ProcessOutput {
  readonly #limits: OutputLimits
  readonly #schema: string
  readonly #deliver: (read: OutputRead) => void
  /** The current line's pieces, while it is short enough to be read here. */
  #parts: Buffer[] = []
  /** A long line's bytes, copied as they arrive into arrays of its own, which are moved to the thread. */
  #blocks = new LineBlocks()
  #bytes = 0
  /** Reading the line's start to tell its kind, once it is past the smaller limit. */
  #scanner: LineKindScanner | undefined
  /** What is left of an oversized line is dropped up to its newline. */
  #dropping = false
  readonly #queue: Slot[] = []
  /** Waiting for the lines read so far to be delivered (`delivered`). */
  #waiting: (() => void)[] = []

  /**
   * `resultSchema` is the algorithm's result schema (the output thread checks long results against it);
   * `deliver` is given each line read, in the order written.
   */
  constructor(limits: OutputLimits, resultSchema: unknown, deliver: (read: OutputRead) => void) {
    this.#limits = limits
    this.#schema = JSON.stringify(resultSchema)
    this.#deliver = deliver
  }

  push(chunk: Buffer): void {
    let from = 0
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, end)
      from = end + 1
      if (this.#dropping) this.#dropping = false
      else if (this.#add(piece)) this.#line()
      // Refused at this very piece: its newline ends it, and the next line is read.
      else this.#dropping = false
    }
    if (from < chunk.length && !this.#dropping) this.#add(chunk.subarray(from))
  }

  /** Keeps a piece of the current line; false when that made the line too long (then it is refused). */
  #add(piece: Buffer): boolean {
    const bytes = this.#bytes + piece.length
    const { maxResultBytes, maxProgressBytes } = this.#limits
    if (bytes > Math.min(maxResultBytes, maxProgressBytes) && this.#scanner === undefined) {
      this.#scanner = new LineKindScanner()
      for (const part of this.#blocks.filled()) this.#scanner.feed(part)
      for (const part of this.#parts) this.#scanner.feed(part)
    }
    const kind = this.#scanner?.kind ?? this.#scanner?.feed(piece)
    const limit =
      kind === undefined ? Math.max(maxResultBytes, maxProgressBytes) : limitOf(this.#limits, kind)
    if (bytes > limit) {
      this.#reset()
      this.#dropping = true
      this.#enqueue(
        kind === undefined
          ? new ProtocolError(`its process wrote a line longer than ${limit} bytes`)
          : oversized(this.#limits, kind),
      )
      return false
    }
    if (bytes <= INLINE_LINE_BYTES) this.#parts.push(piece)
    else {
      // Copied a piece at a time, so that the loop never pays for a whole long line in one turn.
      for (const part of this.#parts) this.#blocks.append(part)
      this.#parts = []
      this.#blocks.append(piece)
    }
    this.#bytes = bytes
    return true
  }

  #reset(): void {
    this.#parts = []
    this.#blocks = new LineBlocks()
    this.#bytes = 0
    this.#scanner = undefined
  }

  #line(): void {
    const parts = this.#parts
    const blocks = this.#blocks
    const bytes = this.#bytes
    this.#reset()
    if (bytes <= INLINE_LINE_BYTES) {
      const line = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, bytes)
      this.#enqueue(this.#readHere(line.toString('utf8'), bytes))
      return
    }
    const slot: Slot = { read: undefined }
    this.#queue.push(slot)
    outputThread.read(blocks.take(), bytes, this.#schema).then((read) => {
      slot.read = this.#fromThread(read, bytes)
      this.#flush()
    })
  }

  #readHere(line: string, bytes: number): OutputRead {
    try {
      return this.#withinLimit(readMessage(line), bytes)
    } catch (error) {
      return error as ProtocolError
    }
  }

  #fromThread(read: LineRead, bytes: number): OutputRead {
    if (read.kind === 'refused') return new ProtocolError(read.problem)
    if (read.kind === 'result')
      return this.#withinLimit(
        { id: read.id, kind: 'result', result: new ResultJson(Buffer.from(read.json)) },
        bytes,
      )
    return this.#withinLimit(read, bytes)
  }

  /** The message, or its failure when its line is longer than its kind may be. */
  #withinLimit(message: ProcessMessage, bytes: number): OutputRead {
    return bytes > limitOf(this.#limits, message.kind) ? oversized(this.#limits, message.kind) : message
  }

  #enqueue(read: OutputRead): void {
    // Nothing ahead of it: delivered in this turn, as the common short answer always is.
    if (this.#queue.length === 0) this.#deliver(read)
    else this.#queue.push({ read })
  }

  #flush(): void {
    while (this.#queue.length > 0 && (this.#queue[0] as Slot).read !== undefined)
      this.#deliver((this.#queue.shift() as Slot).read as OutputRead)
    if (this.#queue.length > 0) return
    const waiting = this.#waiting
    this.#waiting = []
    for (const resolve of waiting) resolve()
  }

  /** Resolves once every line read so far has been delivered (a long one is read on the output thread). */
  delivered(): Promise<void> {
    if (this.#queue.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.#waiting.push(resolve))
  }
}

/**
 * A long line's bytes in arrays of its own, each twice the size of the one before up to a megabyte, every
 * one full but the last: a piece is copied in as it arrives, and the arrays are moved to the output thread
 * without a copy.
 */
class LineBlocks {
  static readonly FIRST = 64 * 1024
  static readonly LARGEST = 1024 * 1024
  readonly #blocks: Uint8Array[] = []
  /** Bytes used of the last block. */
  #used = 0

  append(piece: Uint8Array): void {
    let from = 0
    while (from < piece.length) {
      let block = this.#blocks.at(-1)
      if (block === undefined || this.#used === block.length) {
        const size = block === undefined ? LineBlocks.FIRST : Math.min(2 * block.length, LineBlocks.LARGEST)
        block = new Uint8Array(size)
        this.#blocks.push(block)
        this.#used = 0
      }
      const take = Math.min(block.length - this.#used, piece.length - from)
      block.set(piece.subarray(from, from + take), this.#used)
      this.#used += take
      from += take
    }
  }

  /** The bytes held so far, block by block. */
  *filled(): Iterable<Uint8Array> {
    for (const [index, block] of this.#blocks.entries())
      yield index === this.#blocks.length - 1 ? block.subarray(0, this.#used) : block
  }

  /** The blocks' memory, to be moved; this is left empty. */
  take(): ArrayBuffer[] {
    const buffers = this.#blocks.map((block) => block.buffer as ArrayBuffer)
    this.#blocks.length = 0
    this.#used = 0
    return buffers
  }
}

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
  #parts: Buffer[] = []
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
    this.#parts.push(piece)
    this.#bytes = bytes
    return true
  }

  #reset(): void {
    this.#parts = []
    this.#bytes = 0
    this.#scanner = undefined
  }

  #line(): void {
    const parts = this.#parts
    const bytes = this.#bytes
    this.#reset()
    if (bytes <= INLINE_LINE_BYTES) {
      const line = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, bytes)
      this.#enqueue(this.#readHere(line.toString('utf8'), bytes))
      return
    }
    // One copy into an array of its own, moved to the thread: the pieces go with this turn.
    const line = new Uint8Array(bytes)
    let at = 0
    for (const part of parts) {
      line.set(part, at)
      at += part.length
    }
    const slot: Slot = { read: undefined }
    this.#queue.push(slot)
    outputThread.read(line, this.#schema).then((read) => {
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

// The body of a Server-Sent Events answer that holds at most a bound of what its client has not taken.
// What is behind is counted before each write, so a client that does not read is cut instead of being
// handed one more thing to hold: it comes back with Last-Event-ID. The bound is on the backlog before a
// write, not on the write itself: one event larger than the bound (a job's end with a large result)
// still reaches a client that reads, and written as a Buffer shared by every stream it is no copy each.
import type { ServerResponse } from 'node:http'
import { PassThrough } from 'node:stream'

export class SseStream {
  /** What the route sends: it adds no copy, since Buffers pass through it by reference. */
  readonly body = new PassThrough()
  readonly #raw: ServerResponse
  readonly #maxBehind: number
  readonly #onCut: (behindBytes: number) => void
  // How far behind the client was at the last write or look: one that has taken nothing since is idle.
  #behindAtLastLook = 0

  constructor(raw: ServerResponse, maxBehindBytes: number, onCut: (behindBytes: number) => void) {
    this.#raw = raw
    this.#maxBehind = maxBehindBytes
    this.#onCut = onCut
  }

  /** Bytes written and not yet taken by the client's connection: here, in the answer, in its socket. */
  get behind(): number {
    return this.body.writableLength + this.body.readableLength + this.#raw.writableLength
  }

  get ended(): boolean {
    return this.body.writableEnded
  }

  /** Writes `chunk`, unless the client is more than the bound behind already: then the stream is cut. */
  write(chunk: Buffer): boolean {
    if (this.#raw.destroyed || this.ended) return false
    const behind = this.behind
    if (behind > this.#maxBehind) {
      this.#cut(behind)
      return false
    }
    this.body.write(chunk)
    this.#behindAtLastLook = this.behind
    return true
  }

  end(): void {
    this.body.end()
  }

  /**
   * Cuts the stream when its client is more than the bound behind and has taken nothing since the last
   * write or look: an ended stream whose client never reads its end would hold it as long as it lives.
   */
  look(): void {
    const behind = this.behind
    if (behind > this.#maxBehind && behind >= this.#behindAtLastLook) this.#cut(behind)
    else this.#behindAtLastLook = behind
  }

  #cut(behind: number): void {
    this.#onCut(behind)
    // A reset, not a close: the kernel drops what the socket holds rather than keep sending it.
    const socket = this.#raw.socket
    if (socket !== null && !socket.destroyed) socket.resetAndDestroy()
    else this.#raw.destroy()
    this.body.destroy()
  }
}

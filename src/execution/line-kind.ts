// What a protocol line is, told from its first bytes: the first of 'result', 'error' and 'progress' among
// the members of its top-level object. A line past the progress limit is judged by it while it is still
// arriving, so that an oversized progress line is refused at its limit rather than at the result's.

export type LineKind = 'result' | 'error' | 'progress'

const QUOTE = 0x22
const BACKSLASH = 0x5c
/** The longest member name worth keeping: the three it looks for are shorter. */
const MAX_KEY_BYTES = 8

/** Fed a line's bytes piece by piece; says its kind once the member that decides it has been seen. */
export class LineKindScanner {
  #depth = 0
  #inString = false
  #escaped = false
  /** The next string at depth 1 is a member name. */
  #expectingKey = false
  /** The member name being read, or undefined when the string being read is not one (or too long). */
  #key: number[] | undefined
  #kind: LineKind | undefined

  get kind(): LineKind | undefined {
    return this.#kind
  }

  /** Reads `bytes` on from where the last call stopped; returns the kind once it is known. */
  feed(bytes: Uint8Array): LineKind | undefined {
    for (let i = 0; i < bytes.length && this.#kind === undefined; i++) {
      const byte = bytes[i] as number
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false
        else if (byte === BACKSLASH) this.#escaped = true
        else if (byte === QUOTE) this.#endString()
        else if (this.#key !== undefined) {
          this.#key.push(byte)
          if (this.#key.length > MAX_KEY_BYTES) this.#key = undefined
        }
        continue
      }
      switch (byte) {
        case QUOTE:
          this.#inString = true
          this.#key = this.#expectingKey && this.#depth === 1 ? [] : undefined
          this.#expectingKey = false
          break
        case 0x7b: // {
        case 0x5b: // [
          this.#depth++
          this.#expectingKey = byte === 0x7b && this.#depth === 1
          break
        case 0x7d: // }
        case 0x5d: // ]
          this.#depth--
          break
        case 0x2c: // ,
          this.#expectingKey = this.#depth === 1
          break
      }
    }
    return this.#kind
  }

  #endString(): void {
    this.#inString = false
    if (this.#key === undefined) return
    const name = String.fromCharCode(...this.#key)
    this.#key = undefined
    if (name === 'result' || name === 'error' || name === 'progress') this.#kind = name
  }
}

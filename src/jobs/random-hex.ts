// Random hex text for ids, from a cryptographic source. One call into the source per id showed in the
// profiles under load: ids are cut from a pool that is refilled when spent (each byte is used once).
import { randomFillSync } from 'node:crypto'

const pool = Buffer.alloc(1536)
let next = pool.length

/** `bytes` random bytes (at most 1536) as 2 × `bytes` lowercase hex characters. */
export function randomHex(bytes: number): string {
  if (next + bytes > pool.length) {
    randomFillSync(pool)
    next = 0
  }
  next += bytes
  return pool.toString('hex', next - bytes, next)
}

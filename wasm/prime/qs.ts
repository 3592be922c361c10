// The quadratic sieve's inner loop (src/algorithms/prime-checker/quadratic-sieve.ts): for each factor-base
// prime p from `first` on, adds round(log2 p) to the sieve bytes at its two roots and every p after them, then
// lists the positions whose byte reached 128. The TypeScript side keeps the roots up to date in this module's
// static arrays and trial-divides the listed positions.

export const QS_MAX_WIDTH = 65536
export const QS_MAX_PRIMES = 2048
/** More candidates than this in one polynomial are dropped: a threshold that loose would be mistuned. */
export const QS_MAX_CANDIDATES = 4096

const SIEVE = memory.data(QS_MAX_WIDTH, 16)
const PRIMES = memory.data(QS_MAX_PRIMES * 4, 16)
const ROOT1 = memory.data(QS_MAX_PRIMES * 4, 16)
const ROOT2 = memory.data(QS_MAX_PRIMES * 4, 16)
const LOGS = memory.data(QS_MAX_PRIMES, 16)
const CANDIDATES = memory.data(QS_MAX_CANDIDATES * 4, 16)
const HITS = memory.data(QS_MAX_PRIMES * 4, 16)

export function qsPrimes(): usize {
  return PRIMES
}

export function qsRoot1(): usize {
  return ROOT1
}

export function qsRoot2(): usize {
  return ROOT2
}

export function qsLogs(): usize {
  return LOGS
}

export function qsCandidates(): usize {
  return CANDIDATES
}

export function qsHits(): usize {
  return HITS
}

/**
 * Lists in qsHits() the indices 1 <= i < count of the primes dividing g at sieve position j: those with
 * j mod p at one of their roots. Returns how many.
 */
export function qsDividing(j: i32, count: i32): i32 {
  let found: i32 = 0
  for (let i: i32 = 1; i < count; i++) {
    const at = usize(i) << 2
    const r = j % load<i32>(PRIMES + at)
    if (r == load<i32>(ROOT1 + at) || r == load<i32>(ROOT2 + at)) {
      store<i32>(HITS + (usize(found) << 2), i)
      found++
    }
  }
  return found
}

/**
 * Sieves width bytes (a multiple of 8) starting from `init` with primes first <= i < count; a prime whose
 * root1 is negative divides A and is skipped. Returns how many positions went to the candidate list.
 */
export function qsSieve(width: i32, first: i32, count: i32, init: u32): i32 {
  const fill = u64(init & 0xff) * 0x0101010101010101
  for (let w: i32 = 0; w < width; w += 8) store<u64>(SIEVE + usize(w), fill)
  for (let i = first; i < count; i++) {
    const at = usize(i) << 2
    const r1 = load<i32>(ROOT1 + at)
    if (r1 < 0) continue
    const p = load<i32>(PRIMES + at)
    const r2 = load<i32>(ROOT2 + at)
    const lg = load<u8>(LOGS + usize(i))
    for (let j = r1; j < width; j += p) store<u8>(SIEVE + usize(j), load<u8>(SIEVE + usize(j)) + lg)
    if (r2 != r1) for (let j = r2; j < width; j += p) store<u8>(SIEVE + usize(j), load<u8>(SIEVE + usize(j)) + lg)
  }
  let found: i32 = 0
  for (let w: i32 = 0; w < width; w += 8) {
    if ((load<u64>(SIEVE + usize(w)) & 0x8080808080808080) == 0) continue
    for (let j = w; j < w + 8; j++) {
      if (load<u8>(SIEVE + usize(j)) < 128 || found == QS_MAX_CANDIDATES) continue
      store<i32>(CANDIDATES + (usize(found) << 2), j)
      found++
    }
  }
  return found
}

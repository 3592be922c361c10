import { ODD_PRIMES, oddPrime } from './trial64'

// The quadratic sieve's per-prime loops (src/algorithms/prime-checker/quadratic-sieve.ts): the factor base,
// the roots of each new polynomial, and the sieve itself: for each factor-base prime p from `first` on, adds round(log2 p) to the
// sieve bytes at its two roots and every p after them, then lists the positions whose byte reached 128. The
// TypeScript side chooses the polynomials and trial-divides the listed positions. These loops run in the
// kernel rather than in TypeScript also because V8 spent more CPU time (on its compiler threads) optimising
// them there than a 20-digit factorisation takes once they are optimised.

export const QS_MAX_WIDTH = 131072
export const QS_MAX_PRIMES = 8192
/** More candidates than this in one polynomial are dropped: a threshold that loose would be mistuned. */
export const QS_MAX_CANDIDATES = 4096
/** Bytes of the sieve filled by the primes below it before moving on: L1 data caches hold 32 KiB or more. */
const BLOCK: i32 = 32768

const SIEVE = memory.data(QS_MAX_WIDTH, 16)
const PRIMES = memory.data(QS_MAX_PRIMES * 4, 16)
const ROOT1 = memory.data(QS_MAX_PRIMES * 4, 16)
const ROOT2 = memory.data(QS_MAX_PRIMES * 4, 16)
const LOGS = memory.data(QS_MAX_PRIMES, 16)
const CANDIDATES = memory.data(QS_MAX_CANDIDATES * 4, 16)
const HITS = memory.data(QS_MAX_PRIMES * 4, 16)
/** kN as little-endian 32-bit limbs, for the factor base. */
export const QS_MAX_KN_LIMBS = 8
const KN = memory.data(QS_MAX_KN_LIMBS * 4, 16)
/** The most primes in A. */
export const QS_MAX_A_PRIMES = 20
/** A square root of kN mod each prime. */
const SQRTS = memory.data(QS_MAX_PRIMES * 4, 16)
/** A's primes and their gamma_l (quadratic-sieve.ts, newA). */
const A_PRIMES = memory.data(QS_MAX_A_PRIMES * 4, 16)
const GAMMAS = memory.data(QS_MAX_A_PRIMES * 4, 16)
/** The factor-base indices of A's primes. */
const A_INDICES = memory.data(QS_MAX_A_PRIMES * 4, 16)
/** 2 B_l A^-1 mod p for each term l of B, at (l * QS_MAX_PRIMES + i) * 4. */
const DELTAS = memory.data(QS_MAX_A_PRIMES * QS_MAX_PRIMES * 4, 16)
/** A, then its terms B_l, as QS_MAX_KN_LIMBS little-endian 32-bit limbs each (qsNewA). */
const TERMS = memory.data((QS_MAX_A_PRIMES + 1) * QS_MAX_KN_LIMBS * 4, 16)
/** Where each prime below BLOCK next hits the sieve, from block to block. */
const NEXT1 = memory.data(QS_MAX_PRIMES * 4, 16)
const NEXT2 = memory.data(QS_MAX_PRIMES * 4, 16)
/** 1 / p for each factor-base prime as a 32-bit float, for remainders without a division (qsDividing). */
const RECIPROCALS = memory.data(QS_MAX_PRIMES * 4, 16)
/** The most (candidate, prime) pairs one qsResieve keeps; past it the caller checks every prime instead. */
const RESIEVE_MAX: i32 = QS_MAX_CANDIDATES * 8
/** Prime indices take the low 13 bits of a pair (QS_MAX_PRIMES is 2^13), the candidate the bits above. */
const PRIME_BITS: i32 = 13
/** qsResieve's pairs in the order found, then sorted by candidate. */
const RESIEVE_PAIRS = memory.data(RESIEVE_MAX * 4, 16)
const RESIEVED = memory.data(RESIEVE_MAX * 4, 16)
/** Where each candidate's primes start in RESIEVED; entry c + 1 is where they end. */
const RESIEVE_STARTS = memory.data((QS_MAX_CANDIDATES + 1) * 4, 16)
/** The first factor-base index whose prime is at least BLOCK (set by qsFactorBase). */
let firstLarge: i32 = 0

export function qsTerms(): usize {
  return TERMS
}

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

export function qsSqrts(): usize {
  return SQRTS
}

export function qsAPrimes(): usize {
  return A_PRIMES
}

export function qsGammas(): usize {
  return GAMMAS
}

export function qsAIndices(): usize {
  return A_INDICES
}

/** The current polynomial g(x) = A x^2 + 2 B x + C, its coefficients mod 2^64, and how many primes A has. */
let polyA: i64 = 0
let polyB: i64 = 0
let polyC: i64 = 0
let polyS: i32 = 0
/** The cofactor and sign of the last relation qsRelation found. */
let cofactor: i32 = 0
let negative = false

export function qsSetPolynomial(a: i64, b: i64, c: i64, s: i32): void {
  polyA = a
  polyB = b
  polyC = c
  polyS = s
}

export function qsCofactor(): i32 {
  return cofactor
}

export function qsNegative(): bool {
  return negative
}

/**
 * For a polynomial whose |g(x)| stays below 2^63 over the sieve (so that g(x), computed mod 2^64, is exact):
 * lists in qsHits() the factor-base indices of g(x) at sieve position j with multiplicity, 0 for each 2, after
 * those of A, and keeps the cofactor and sign for qsCofactor and qsNegative. Returns how many indices, or -1
 * when g(x) is 0 or the cofactor exceeds largeBound.
 */
export function qsRelation(j: i32, count: i32, half: i32, largeBound: i32): i32 {
  const x = i64(j - half)
  let g = (polyA * x + 2 * polyB) * x + polyC
  negative = g < 0
  let rest = u64(negative ? -g : g)
  if (rest == 0) return -1
  let found: i32 = 0
  for (let twos = ctz(rest); twos > 0; twos--) {
    store<i32>(HITS + (usize(found) << 2), 0)
    found++
  }
  rest >>= ctz(rest)
  for (let i: i32 = 1; i < count; i++) {
    const at = usize(i) << 2
    const p = load<i32>(PRIMES + at)
    const r = j % p
    if (r != load<i32>(ROOT1 + at) && r != load<i32>(ROOT2 + at)) continue
    do {
      rest /= u64(p)
      store<i32>(HITS + (usize(found) << 2), i)
      found++
    } while (rest % u64(p) == 0)
  }
  // A's primes divide A g(x) = y^2 - kN once through A; here only further powers in g(x) itself.
  for (let l: i32 = 0; l < polyS; l++) {
    const q = u64(load<i32>(A_PRIMES + (usize(l) << 2)))
    const i = load<i32>(A_INDICES + (usize(l) << 2))
    while (rest % q == 0) {
      rest /= q
      store<i32>(HITS + (usize(found) << 2), i)
      found++
    }
  }
  if (rest > u64(largeBound)) return -1
  cofactor = i32(rest)
  return found
}

export function qsKn(): usize {
  return KN
}

/** b^e mod p for p < 2^31. */
function powMod(base: u32, e: u32, p: u32): u32 {
  let result: u64 = 1
  let b = u64(base % p)
  for (; e > 0; e >>= 1) {
    if (e & 1) result = (result * b) % u64(p)
    b = (b * b) % u64(p)
  }
  return u32(result)
}

/** (a b) mod p for a, b < p < 2^31. */
// @ts-ignore: decorator
@inline
function mulMod(a: u32, b: u32, p: u32): u32 {
  return u32((u64(a) * u64(b)) % u64(p))
}

/** A square root of the quadratic residue r mod the odd prime p < 2^31 (Tonelli-Shanks), or -1 for a non-residue. */
function sqrtMod(r: u32, p: u32): i32 {
  if (powMod(r, (p - 1) >> 1, p) != 1) return -1
  if ((p & 3) == 3) return i32(powMod(r, (p + 1) >> 2, p))
  const s = ctz(p - 1)
  const q = (p - 1) >> s
  let z: u32 = 2
  while (powMod(z, (p - 1) >> 1, p) != p - 1) z++
  let m = s
  let c = powMod(z, q, p)
  let t = powMod(r, q, p)
  let root = powMod(r, (q + 1) >> 1, p)
  while (t != 1) {
    let i: u32 = 0
    for (let t2 = t; t2 != 1; t2 = mulMod(t2, t2, p)) i++
    let b = c
    for (let j: u32 = 0; j + i + 1 < m; j++) b = mulMod(b, b, p)
    m = i
    c = mulMod(b, b, p)
    t = mulMod(t, c, p)
    root = mulMod(root, b, p)
  }
  return i32(root)
}

/** N mod p from the `limbs` limbs at `at`, for p < 2^31: Horner from the top limb, below 2^63 throughout. */
function residueAt(at: usize, limbs: i32, p: u32): u32 {
  let r: u64 = 0
  for (let l = limbs - 1; l >= 0; l--) r = ((r << 32) | u64(load<u32>(at + (usize(l) << 2)))) % u64(p)
  return u32(r)
}

function residue(limbs: i32, p: u32): u32 {
  return residueAt(KN, limbs, p)
}

/** The odd prime after the odd number p (p >= 3): past the table, by trial division by the table's primes. */
function nextOddPrime(p: u32): u32 {
  let c = p + 2
  for (let i: i32 = 0; i < ODD_PRIMES; i++) {
    const d = oddPrime(i)
    if (d * d > c) break
    if (c % d == 0) {
      c += 2
      i = -1
    }
  }
  return c
}

/** Lists in qsHits() the Legendre symbols (x / p), -1, 0 or 1, of x in qsKn for the first `count` odd primes. */
export function qsLegendre(limbs: i32, count: i32): void {
  for (let i: i32 = 0; i < count; i++) {
    const p = oddPrime(i)
    const r = residue(limbs, p)
    store<i32>(HITS + (usize(i) << 2), r == 0 ? 0 : powMod(r, (p - 1) >> 1, p) == 1 ? 1 : -1)
  }
}

/**
 * The factor base for kN (qsKn, `limbs` limbs): 2, then up to size - 1 odd primes p with kN a square mod p
 * (including those dividing kN, with root 0), their square roots of kN and round(log2 p). Returns the count.
 */
export function qsFactorBase(limbs: i32, size: i32): i32 {
  store<i32>(PRIMES, 2)
  store<i32>(SQRTS, 0)
  store<u8>(LOGS, 1)
  let count: i32 = 1
  firstLarge = size
  let p: u32 = 1
  for (let i: i32 = 0; count < size; i++) {
    p = i < ODD_PRIMES ? oddPrime(i) : nextOddPrime(p)
    const r = residue(limbs, p)
    const root = r == 0 ? 0 : sqrtMod(r, p)
    if (root < 0) continue
    const at = usize(count) << 2
    store<i32>(PRIMES + at, i32(p))
    store<i32>(SQRTS + at, root)
    // round(log2 p): the bit length, less one below sqrt(2) times the power of two.
    const bits = 31 - i32(clz(p))
    store<u8>(LOGS + usize(count), u8(u64(p) * u64(p) >= u64(2) << u64(2 * bits) ? bits + 1 : bits))
    store<f32>(RECIPROCALS + (usize(count) << 2), f32(1.0 / f64(p)))
    if (p >= u32(BLOCK) && firstLarge == size) firstLarge = count
    count++
  }
  if (firstLarge > count) firstLarge = count
  return count
}

/** a^-1 mod m for 0 < a < m < 2^31 coprime to m, by the extended Euclidean algorithm. */
function invMod(a: i32, m: i32): i32 {
  let r0 = a
  let r1 = m
  let s0: i32 = 1
  let s1: i32 = 0
  while (r1 != 0) {
    const q = r0 / r1
    const r2 = r0 - q * r1
    r0 = r1
    r1 = r2
    const s2 = s0 - q * s1
    s0 = s1
    s1 = s2
  }
  return s0 < 0 ? s0 + m : s0
}

/**
 * For a new A (qsTerms slot 0) with B = sum of the terms B_l (slots 1 to s), each `limbs` limbs: every other
 * prime's roots x + half of g(x) = A x^2 + 2 B x + C, and the deltas 2 B_l A^-1 mod p by which they move when
 * a B_l changes sign. Primes dividing A are left for the caller to mark (root1 set to -1).
 */
export function qsNewA(size: i32, s: i32, half: i32, limbs: i32): void {
  const stride = usize(QS_MAX_KN_LIMBS) << 2
  for (let i: i32 = 1; i < size; i++) {
    const at = usize(i) << 2
    const p = u32(load<i32>(PRIMES + at))
    const aModP = residueAt(TERMS, limbs, p)
    if (aModP == 0) continue
    const aInv = u32(invMod(i32(aModP), i32(p)))
    let bModP: u32 = 0
    for (let l: i32 = 0; l < s; l++) {
      const bl = residueAt(TERMS + stride * usize(l + 1), limbs, p)
      bModP += bl
      if (bModP >= p) bModP -= p
      store<i32>(DELTAS + ((usize(l) * QS_MAX_PRIMES + usize(i)) << 2), i32(mulMod((2 * bl) % p, aInv, p)))
    }
    const t = u32(load<i32>(SQRTS + at))
    const shift = u32(half) % p
    store<i32>(ROOT1 + at, i32((mulMod(aInv, (t + p - bModP) % p, p) + shift) % p))
    store<i32>(ROOT2 + at, i32((mulMod(aInv, (2 * p - t - bModP) % p, p) + shift) % p))
  }
}

/**
 * Moves every prime's roots from B to B + 2 B_v (plus) or B - 2 B_v: x = A^-1 (+-t - B) moves by -+2 B_v A^-1.
 * Roots of -1 (primes of A) stay.
 */
export function qsNextB(size: i32, v: i32, plus: bool): void {
  const deltas = DELTAS + ((usize(v) * QS_MAX_PRIMES) << 2)
  for (let i: i32 = 1; i < size; i++) {
    const at = usize(i) << 2
    const r1 = load<i32>(ROOT1 + at)
    if (r1 < 0) continue
    const p = load<i32>(PRIMES + at)
    const d = plus ? p - load<i32>(deltas + at) : load<i32>(deltas + at)
    // r + d with 0 <= r, d < p: one subtraction brings it back below p.
    let n1 = r1 + d
    let n2 = load<i32>(ROOT2 + at) + d
    if (n1 >= p) n1 -= p
    if (n2 >= p) n2 -= p
    store<i32>(ROOT1 + at, n1)
    store<i32>(ROOT2 + at, n2)
  }
}

/**
 * Lists in qsHits() the indices 1 <= i < count of the primes dividing g at sieve position j: those with
 * j mod p at one of their roots. Returns how many.
 */
export function qsDividing(j: i32, count: i32): i32 {
  let found: i32 = 0
  const x = f32x4.splat(f32(j))
  const jj = i32x4.splat(j)
  // Four primes at a time: j / p rounded down from j (1 / p) on 32-bit floats is off by at most one (j < 2^17,
  // so the error is below 2^-7), and one correction each way makes the remainder exact.
  for (let i: i32 = 0; i < count; i += 4) {
    const at = usize(i) << 2
    const p = v128.load(PRIMES + at)
    const q = i32x4.trunc_sat_f32x4_s(f32x4.mul(x, v128.load(RECIPROCALS + at)))
    let r = i32x4.sub(jj, i32x4.mul(q, p))
    r = i32x4.add(r, v128.and(p, i32x4.lt_s(r, i32x4.splat(0))))
    r = i32x4.sub(r, v128.and(p, i32x4.ge_s(r, p)))
    const hit = v128.or(i32x4.eq(r, v128.load(ROOT1 + at)), i32x4.eq(r, v128.load(ROOT2 + at)))
    if (!v128.any_true(hit)) continue
    // Lanes past count and index 0 (the prime 2, whose roots are not kept) are not factor-base hits.
    for (let lane: i32 = 0; lane < 4; lane++) {
      const k = i + lane
      if (k == 0 || k >= count) continue
      const pk = load<i32>(PRIMES + (usize(k) << 2))
      const rk = j % pk
      if (rk == load<i32>(ROOT1 + (usize(k) << 2)) || rk == load<i32>(ROOT2 + (usize(k) << 2))) {
        store<i32>(HITS + (usize(found) << 2), k)
        found++
      }
    }
  }
  return found
}

/**
 * Sieves width bytes (a multiple of 8) starting from `init` with primes first <= i < count; a prime whose
 * root1 is negative divides A and is skipped. Primes below BLOCK sieve one L1-sized block at a time, both
 * roots in one loop; the larger ones hit each block at most once per root and sieve the whole width at once.
 * Returns how many positions went to the candidate list.
 */
export function qsSieve(width: i32, first: i32, count: i32, init: u32): i32 {
  const fill = u64(init & 0xff) * 0x0101010101010101
  for (let w: i32 = 0; w < width; w += 8) store<u64>(SIEVE + usize(w), fill)
  const large = min(firstLarge, count)
  for (let i = first; i < large; i++) {
    const at = usize(i) << 2
    store<i32>(NEXT1 + at, load<i32>(ROOT1 + at))
    store<i32>(NEXT2 + at, load<i32>(ROOT2 + at))
  }
  for (let start: i32 = 0; start < width; start += BLOCK) {
    const end = min(start + BLOCK, width)
    for (let i = first; i < large; i++) {
      const at = usize(i) << 2
      let j1 = load<i32>(NEXT1 + at)
      if (j1 < 0) continue
      const p = load<i32>(PRIMES + at)
      const lg = load<u8>(LOGS + usize(i))
      let j2 = load<i32>(NEXT2 + at)
      if (j1 == j2) {
        for (; j1 < end; j1 += p) store<u8>(SIEVE + usize(j1), load<u8>(SIEVE + usize(j1)) + lg)
        store<i32>(NEXT1 + at, j1)
        store<i32>(NEXT2 + at, j1)
        continue
      }
      if (j1 > j2) {
        const t = j1
        j1 = j2
        j2 = t
      }
      // j1 < j2 < j1 + p: while j2 is in the block, so is j1.
      for (; j2 < end; j1 += p, j2 += p) {
        store<u8>(SIEVE + usize(j1), load<u8>(SIEVE + usize(j1)) + lg)
        store<u8>(SIEVE + usize(j2), load<u8>(SIEVE + usize(j2)) + lg)
      }
      if (j1 < end) {
        store<u8>(SIEVE + usize(j1), load<u8>(SIEVE + usize(j1)) + lg)
        j1 += p
      }
      store<i32>(NEXT1 + at, j1)
      store<i32>(NEXT2 + at, j2)
    }
  }
  for (let i = max(first, large); i < count; i++) {
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
  for (let w: i32 = 0; w < width; w += 16) {
    if (!v128.any_true(v128.and(v128.load(SIEVE + usize(w)), i8x16.splat(-128)))) continue
    for (let j = w; j < w + 16; j++) {
      if (load<u8>(SIEVE + usize(j)) < 128 || found == QS_MAX_CANDIDATES) continue
      store<i32>(CANDIDATES + (usize(found) << 2), j)
      found++
    }
  }
  return found
}

/** The index of position j among the first `found` candidates (ascending), or -1 if it was not listed. */
function candidateAt(j: i32, found: i32): i32 {
  let lo: i32 = 0
  let hi: i32 = found - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = load<i32>(CANDIDATES + (usize(mid) << 2))
    if (at < j) lo = mid + 1
    else if (at > j) hi = mid - 1
    else return mid
  }
  return -1
}

/** Notes prime i at the candidates among r, r + p, ... below width; returns the new pair count, or -1 when full. */
function resieveRoot(r: i32, p: i32, i: i32, width: i32, found: i32, pairs: i32): i32 {
  for (let j = r; j < width; j += p) {
    // The sieve still holds the sums qsSieve listed its candidates by.
    if (load<u8>(SIEVE + usize(j)) < 128) continue
    const c = candidateAt(j, found)
    if (c < 0) continue
    if (pairs == RESIEVE_MAX) return -1
    store<i32>(RESIEVE_PAIRS + (usize(pairs) << 2), (c << PRIME_BITS) | i)
    pairs++
  }
  return pairs
}

/**
 * Resieving: after qsSieve has listed `found` candidates, walks the roots of the
 * primes from <= i < count over the sieve once more and notes each candidate a root lands on, so that those
 * primes need not be checked candidate by candidate; a large prime lands on few positions, so this costs less
 * than checking it at every candidate. Groups the primes by candidate for qsDividingResieved (each
 * candidate's ascending). Returns how many (candidate, prime) pairs, or -1 when they do not fit.
 */
export function qsResieve(width: i32, from: i32, count: i32, found: i32): i32 {
  let pairs: i32 = 0
  for (let i = from; i < count && pairs >= 0; i++) {
    const at = usize(i) << 2
    const r1 = load<i32>(ROOT1 + at)
    if (r1 < 0) continue
    const p = load<i32>(PRIMES + at)
    const r2 = load<i32>(ROOT2 + at)
    pairs = resieveRoot(r1, p, i, width, found, pairs)
    if (r2 != r1 && pairs >= 0) pairs = resieveRoot(r2, p, i, width, found, pairs)
  }
  if (pairs < 0) return -1
  // Counting sort by candidate, stable, so each candidate's primes stay ascending; NEXT1 (free between
  // sieves) holds the cursors.
  for (let c: i32 = 0; c <= found; c++) store<i32>(RESIEVE_STARTS + (usize(c) << 2), 0)
  for (let k: i32 = 0; k < pairs; k++) {
    const at = RESIEVE_STARTS + (usize((load<i32>(RESIEVE_PAIRS + (usize(k) << 2)) >>> PRIME_BITS) + 1) << 2)
    store<i32>(at, load<i32>(at) + 1)
  }
  for (let c: i32 = 0; c < found; c++) {
    const at = RESIEVE_STARTS + (usize(c) << 2)
    store<i32>(at + 4, load<i32>(at + 4) + load<i32>(at))
    store<i32>(NEXT1 + (usize(c) << 2), load<i32>(at))
  }
  for (let k: i32 = 0; k < pairs; k++) {
    const pair = load<i32>(RESIEVE_PAIRS + (usize(k) << 2))
    const cursor = NEXT1 + (usize(pair >>> PRIME_BITS) << 2)
    const to = load<i32>(cursor)
    store<i32>(RESIEVED + (usize(to) << 2), pair & ((1 << PRIME_BITS) - 1))
    store<i32>(cursor, to + 1)
  }
  return pairs
}

/**
 * qsDividing for the primes below `from`, then the primes qsResieve found for candidate c (at position j):
 * lists in qsHits() every index 1 <= i < count of a prime dividing g there. Returns how many.
 */
export function qsDividingResieved(j: i32, c: i32, from: i32): i32 {
  let found = qsDividing(j, from)
  const end = load<i32>(RESIEVE_STARTS + ((usize(c) + 1) << 2))
  for (let k = load<i32>(RESIEVE_STARTS + (usize(c) << 2)); k < end; k++) {
    store<i32>(HITS + (usize(found) << 2), load<i32>(RESIEVED + (usize(k) << 2)))
    found++
  }
  return found
}

/**
 * Gaussian elimination over GF(2) on columns from <= c < to of the matrix at `base` (16-byte aligned): `rows`
 * rows of `stride` 32-bit words (a multiple of 4), bit c of a row at word c >> 5, and one byte per row at `pivoted`, set once the row is a
 * pivot. For each column the first unpivoted row with its bit set becomes the pivot and is added to every
 * later unpivoted row with the bit set, from the column's word on: those rows are zero before it.
 */
export function qsEliminate(base: usize, rows: i32, stride: i32, from: i32, to: i32, pivoted: usize): void {
  const rowBytes = usize(stride) << 2
  for (let c = from; c < to; c++) {
    const word = usize(c >>> 5) << 2
    const bit = u32(1) << (c & 31)
    let pivot: i32 = -1
    for (let r: i32 = 0; r < rows; r++) {
      if (load<u8>(pivoted + usize(r)) == 0 && (load<u32>(base + usize(r) * rowBytes + word) & bit) != 0) {
        pivot = r
        break
      }
    }
    if (pivot < 0) continue
    store<u8>(pivoted + usize(pivot), 1)
    const pivotRow = base + usize(pivot) * rowBytes
    for (let r = pivot + 1; r < rows; r++) {
      const row = base + usize(r) * rowBytes
      if (load<u8>(pivoted + usize(r)) != 0 || (load<u32>(row + word) & bit) == 0) continue
      // Rows are whole 16-byte vectors (stride a multiple of 4 words): XOR from the vector holding the column.
      for (let w = word & ~usize(15); w < rowBytes; w += 16) {
        v128.store(row + w, v128.xor(v128.load(row + w), v128.load(pivotRow + w)))
      }
    }
  }
}

// The merge phase of structured Gaussian elimination (LaMacchia and Odlyzko 1990; Cavallar 2000, merges):
// columns in few rows are eliminated on sparse rows, each merge taking one row and one column off the matrix,
// so that the dense elimination above runs on a smaller one. Rows are ascending column lists in an arena; a
// row that changes is written anew at its end (the space is not reused: the caller bounds it). Each column
// of few rows keeps the list of rows that may hold it, checked when it is merged, as a row that loses the
// column stays in the list. The combinations are kept as a log of (row, pivot) pairs, "pivot added to row",
// which the caller replays backwards to map a dependency of the reduced matrix to the input rows.

let mRows: i32 = 0
let mColumns: i32 = 0
let mMaxWeight: i32 = 0
let mTrack: i32 = 0
/** Per row: its start in the arena (the input's row starts, then moved), its length, -1 once removed. */
let mRowOff: usize = 0
let mRowLen: usize = 0
/** Per column: its weight, and the list of rows that may hold it (capacity 0: not tracked, never merged). */
let mWeight: usize = 0
let mColOff: usize = 0
let mColLen: usize = 0
let mColCap: usize = 0
/** Per row: the merge that last found it, to drop repeats from a column's list. */
let mMark: usize = 0
let mStamp: i32 = 0
let mFound: usize = 0
let mLog: usize = 0
let mLogLen: i32 = 0
let mLogCap: i32 = 0
let mArena: usize = 0
let mArenaEnd: i32 = 0
let mArenaCap: i32 = 0
let mColArena: usize = 0
let mColEnd: i32 = 0
let mColWords: i32 = 0
/** Where the scan is: merges of up to mLimit rows, at column mColumn; whether this pass merged any. */
let mLimit: i32 = 0
let mColumn: i32 = 0
let mChanged = false
let mLive: i32 = 0

// @ts-ignore: decorator
@inline
function ld(at: usize, i: i32): i32 {
  return load<i32>(at + (usize(i) << 2))
}

// @ts-ignore: decorator
@inline
function st(at: usize, i: i32, value: i32): void {
  store<i32>(at + (usize(i) << 2), value)
}

/** Bytes qsMergeInit uses from its base, for these sizes (words of row arena, column arena, log pairs). */
export function qsMergeBytes(rows: i32, columns: i32, maxWeight: i32, arenaWords: i32, colWords: i32, logCap: i32): f64 {
  return 4 * (f64(3 * rows + 1 + 4 * columns + maxWeight + 1 + 2 * logCap) + f64(arenaWords) + f64(colWords))
}

/**
 * Starts the merges on `rows` rows over `columns` columns laid out at `base`: rows + 1 row starts, then the
 * row arena of arenaWords words whose first words hold the rows' ascending columns. Columns of weight up to
 * maxWeight are merged (qsMergeRun); only columns of weight up to `track` keep their row lists.
 */
export function qsMergeInit(
  base: usize,
  rows: i32,
  columns: i32,
  maxWeight: i32,
  track: i32,
  arenaWords: i32,
  colWords: i32,
  logCap: i32,
): void {
  mRows = rows
  mColumns = columns
  mMaxWeight = maxWeight
  mTrack = track
  mRowOff = base
  mArena = base + (usize(rows + 1) << 2)
  mArenaEnd = ld(mRowOff, rows)
  mArenaCap = arenaWords
  mRowLen = mArena + (usize(arenaWords) << 2)
  mWeight = mRowLen + (usize(rows) << 2)
  mColOff = mWeight + (usize(columns) << 2)
  mColLen = mColOff + (usize(columns) << 2)
  mColCap = mColLen + (usize(columns) << 2)
  mMark = mColCap + (usize(columns) << 2)
  mFound = mMark + (usize(rows) << 2)
  mLog = mFound + (usize(maxWeight + 1) << 2)
  mLogCap = logCap
  mColArena = mLog + (usize(logCap) << 3)
  mColWords = colWords
  memory.fill(mWeight, 0, usize(columns) << 2)
  memory.fill(mColLen, 0, usize(columns) << 2)
  memory.fill(mMark, 0, usize(rows) << 2)
  for (let r: i32 = 0; r < rows; r++) {
    const from = ld(mRowOff, r)
    const to = ld(mRowOff, r + 1)
    st(mRowLen, r, to - from)
    for (let k = from; k < to; k++) {
      const c = ld(mArena, k)
      st(mWeight, c, ld(mWeight, c) + 1)
    }
  }
  mColEnd = 0
  for (let c: i32 = 0; c < columns; c++) {
    const w = ld(mWeight, c)
    let cap: i32 = 0
    if (w > 0 && w <= track && mColEnd + 2 * w + 4 <= colWords) {
      cap = 2 * w + 4
      st(mColOff, c, mColEnd)
      mColEnd += cap
    }
    st(mColCap, c, cap)
  }
  for (let r: i32 = 0; r < rows; r++) {
    for (let k = ld(mRowOff, r), end = ld(mRowOff, r + 1); k < end; k++) {
      const c = ld(mArena, k)
      const cap = ld(mColCap, c)
      if (cap == 0) continue
      const len = ld(mColLen, c)
      st(mColArena, ld(mColOff, c) + len, r)
      st(mColLen, c, len + 1)
    }
  }
  mStamp = 0
  mLogLen = 0
  mLimit = 1
  mColumn = 0
  mChanged = false
  mLive = rows
}

/** Whether row r (alive) holds column c: binary search of its ascending list. */
function holds(r: i32, c: i32): bool {
  let lo = ld(mRowOff, r)
  let hi = lo + ld(mRowLen, r) - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const at = ld(mArena, mid)
    if (at < c) lo = mid + 1
    else if (at > c) hi = mid - 1
    else return true
  }
  return false
}

/** Keeps in column c's list only the live rows that hold it, once each; returns how many. */
function refreshColumn(c: i32): i32 {
  mStamp++
  const off = ld(mColOff, c)
  const len = ld(mColLen, c)
  let kept: i32 = 0
  for (let i: i32 = 0; i < len; i++) {
    const r = ld(mColArena, off + i)
    if (ld(mRowLen, r) < 0 || ld(mMark, r) == mStamp || !holds(r, c)) continue
    st(mMark, r, mStamp)
    st(mColArena, off + kept, r)
    kept++
  }
  st(mColLen, c, kept)
  return kept
}

/** Notes that row r now holds column c; a column grown past mTrack rows, or out of room, stops being tracked. */
function colAppend(c: i32, r: i32): void {
  const cap = ld(mColCap, c)
  if (cap == 0) return
  if (ld(mWeight, c) > mTrack) {
    st(mColCap, c, 0)
    return
  }
  let len = ld(mColLen, c)
  if (len == cap) {
    len = refreshColumn(c)
    if (len == cap) {
      if (mColEnd + 2 * cap > mColWords) {
        st(mColCap, c, 0)
        return
      }
      memory.copy(mColArena + (usize(mColEnd) << 2), mColArena + (usize(ld(mColOff, c)) << 2), usize(len) << 2)
      st(mColOff, c, mColEnd)
      st(mColCap, c, 2 * cap)
      mColEnd += 2 * cap
    }
  }
  st(mColArena, ld(mColOff, c) + len, r)
  st(mColLen, c, len + 1)
}

/** Row r becomes r + pivot, written at the arena's end (room checked by the caller). */
function addRow(r: i32, pivot: i32): void {
  let i = ld(mRowOff, r)
  const iEnd = i + ld(mRowLen, r)
  let j = ld(mRowOff, pivot)
  const jEnd = j + ld(mRowLen, pivot)
  const start = mArenaEnd
  let out = start
  while (i < iEnd && j < jEnd) {
    const a = ld(mArena, i)
    const b = ld(mArena, j)
    if (a < b) {
      st(mArena, out++, a)
      i++
    } else if (b < a) {
      st(mArena, out++, b)
      st(mWeight, b, ld(mWeight, b) + 1)
      colAppend(b, r)
      j++
    } else {
      st(mWeight, a, ld(mWeight, a) - 1)
      i++
      j++
    }
  }
  for (; i < iEnd; i++) st(mArena, out++, ld(mArena, i))
  for (; j < jEnd; j++) {
    const b = ld(mArena, j)
    st(mArena, out++, b)
    st(mWeight, b, ld(mWeight, b) + 1)
    colAppend(b, r)
  }
  st(mRowOff, r, start)
  st(mRowLen, r, out - start)
  mArenaEnd = out
  st(mLog, 2 * mLogLen, r)
  st(mLog, 2 * mLogLen + 1, pivot)
  mLogLen++
}

/**
 * Eliminates column c: its lightest row is added to its other rows and removed (a singleton is just removed).
 * Returns the words written and read, or -1 when the arena or the log has no room for it.
 */
function mergeColumn(c: i32): i32 {
  const found = refreshColumn(c)
  if (found == 0 || found > mMaxWeight) return 0
  let pivot = ld(mColArena, ld(mColOff, c))
  for (let i: i32 = 1; i < found; i++) {
    const r = ld(mColArena, ld(mColOff, c) + i)
    if (ld(mRowLen, r) < ld(mRowLen, pivot)) pivot = r
  }
  // The rows to add to, copied: appending to other columns' lists may move this one's.
  let others: i32 = 0
  let room: i32 = 0
  for (let i: i32 = 0; i < found; i++) {
    const r = ld(mColArena, ld(mColOff, c) + i)
    if (r == pivot) continue
    st(mFound, others++, r)
    room += ld(mRowLen, r) + ld(mRowLen, pivot)
  }
  if (mArenaEnd + room > mArenaCap || mLogLen + others > mLogCap) return -1
  for (let i: i32 = 0; i < others; i++) addRow(ld(mFound, i), pivot)
  const from = ld(mRowOff, pivot)
  const len = ld(mRowLen, pivot)
  for (let k = from; k < from + len; k++) {
    const col = ld(mArena, k)
    st(mWeight, col, ld(mWeight, col) - 1)
  }
  st(mRowLen, pivot, -1)
  mLive--
  return room + len + found
}

/**
 * Runs the merges for about `work` words, the lightest columns first: every column of 1 row, then of up to
 * 2, and so on to maxWeight, each bound until a pass merges nothing. Returns 1 when done
 * (every tracked column is heavier than maxWeight, or the arena or log is full), 0 when there is more.
 */
export function qsMergeRun(work: i32): i32 {
  let done: i32 = 0
  while (done < work) {
    if (mColumn == mColumns) {
      if (!mChanged && ++mLimit > mMaxWeight) return 1
      mColumn = 0
      mChanged = false
    }
    const c = mColumn++
    done++
    const w = ld(mWeight, c)
    if (w == 0 || w > mLimit || ld(mColCap, c) == 0) continue
    const cost = mergeColumn(c)
    if (cost < 0) {
      mLimit = mMaxWeight + 1
      mColumn = mColumns
      mChanged = false
      return 1
    }
    done += cost
    if (cost > 0) mChanged = true
  }
  return 0
}

export function qsMergeLive(): i32 {
  return mLive
}

export function qsMergeLogLength(): i32 {
  return mLogLen
}

export function qsMergeLog(): usize {
  return mLog
}

export function qsMergeRowOffsets(): usize {
  return mRowOff
}

export function qsMergeRowLengths(): usize {
  return mRowLen
}

export function qsMergeWeights(): usize {
  return mWeight
}

export function qsMergeArena(): usize {
  return mArena
}

// Montgomery arithmetic (Montgomery 1985) for Baillie-PSW, in radix 2^28 with finely integrated product
// scanning (FIPS, Koc, Acar and Kaliski 1996): each column of a b + m n is summed in u64 lanes with no carry
// per product, because a 28-bit product leaves 8 spare bits. With one operand of each product stored reversed,
// a column is a dot product, which WebAssembly SIMD (asc --enable simd) does eight limbs a step: i64x2.extmul
// of two u32x4 gives two products per instruction. The 32-bit CIOS of montn has carry chains that do not
// vectorise, and spends about twice the instructions per limb product even without SIMD.
// Residues are k little-endian 28-bit limbs in u32 words, in Montgomery form x R mod n with R = 2^(28k).
//
// Memory is a static block of numbered slots, apart from montn's, so rho and ECM keep their state.

/** Bits per limb. */
export const BITS28 = 28
const MASK: u64 = (u64(1) << BITS28) - 1
const MASK32: u32 = (u32(1) << BITS28) - 1

/** The most limbs: 35840 bits, beyond the service's largest inputs. */
export const MAX_LIMBS28 = 1280
const SLOTS = 12
/** Limbs past the k of every slot that are kept zero, so that sums may run in whole 8-limb steps. */
export const PAD = 8
/** Three more slots at the end: the m_i of the running multiplication, n and an operand reversed. */
const BASE = memory.data((SLOTS + 3) * (MAX_LIMBS28 + PAD) * 4, 16)
const STRIDE: usize = (MAX_LIMBS28 + PAD) * 4
const NPTR = BASE
const MPTR = BASE + usize(SLOTS) * STRIDE
const NREVPTR = MPTR + STRIDE
const REVPTR = NREVPTR + STRIDE

/** 8-limb steps of dot2 before the column sum is split: 240 products < 2^56 stay below 2^64. */
const STEPS2 = 15

/**
 * Below this many limbs the two sums per column of sqr28 cost more than the products they save (mul28 as a
 * square against sqr28: docs/benchmarks/prime-checker.md, run of 2026-11-21 19:10 UTC).
 */
const SQR_MIN_LIMBS = 80

/**
 * From this many limbs mul28 forms the full product by Karatsuba, then reduces it by columns: with SIMD
 * column sums, the crossover against columns (BENCHMARKS.md, History, run of 2026-11-21 19:10 UTC). sqr28
 * keeps its columns: the reduction alone costs about what its halved products do.
 */
const KARATSUBA_MIN_LIMBS = 450
/** Karatsuba halves operands to this many limbs or fewer (base cases measured as for KARATSUBA_MIN_LIMBS). */
const KARATSUBA_BASE_LIMBS = 100
/** Karatsuba scratch: 4 ceil(n/2) words per level of n limbs, then 2 ceil(n/2) + 1 at the last; under 5 k. */
const SCRATCH = memory.data(5 * (MAX_LIMBS28 + PAD) * 4, 16)
/** The full product of a Karatsuba mul28 (2k limbs), then b reversed for a base case. */
const TPTR = memory.data(3 * (MAX_LIMBS28 + PAD) * 4, 16)
const BREVPTR = TPTR + 2 * STRIDE

let K: i32 = 0
let NINV: u32 = 0
/** The two halves of the column sum being built: the sum is HI 2^28 + LO. */
let HI: u64 = 0
let LO: u64 = 0

/** Slot 0 holds the modulus; callers use 1 and up. */
export function slot28(i: i32): usize {
  return BASE + usize(i) * STRIDE
}

/** Reads the modulus the caller stored in slot 0 as k limbs. */
export function setModulus28(k: i32): void {
  K = k
  const n0 = load<u32>(NPTR)
  // -n^-1 mod 2^32 by Newton's iteration (the low 28 bits are what REDC needs).
  let x = n0
  for (let i = 0; i < 4; i++) x *= 2 - n0 * x
  NINV = (0 - x) & MASK32
  for (let i = 0; i < SLOTS + 3; i++) memory.fill(slot28(i) + (usize(k) << 2), 0, PAD << 2)
  reverse(NREVPTR, NPTR)
}

// @ts-ignore: decorator
@inline
function limb(p: usize, i: i32): u64 {
  return u64(load<u32>(p + (usize(i) << 2)))
}

// @ts-ignore: decorator
@inline
function fold(sum: u64): void {
  LO += sum & MASK
  HI += sum >> BITS28
}

// @ts-ignore: decorator
@inline
function prod(x: usize, y: usize, offset: usize): u64 {
  return u64(load<u32>(x + offset)) * u64(load<u32>(y + offset))
}

/** x[t] y[t] for the four limbs t at offset, summed in pairs into two u64 lanes (pmuludq on x64). */
// @ts-ignore: decorator
@inline
function prod4(x: usize, y: usize, offset: usize): v128 {
  const a = v128.load(x + offset)
  const b = v128.load(y + offset)
  return i64x2.add(i64x2.extmul_low_i32x4_u(a, b), i64x2.extmul_high_i32x4_u(a, b))
}

// @ts-ignore: decorator
@inline
function lanes(s: v128): u64 {
  return u64(i64x2.extract_lane(s, 0)) + u64(i64x2.extract_lane(s, 1))
}

/**
 * Adds sum over t < count of x[t] y[t] + u[t] v[t] to HI, LO; y and v are stored reversed so that all four
 * walk up, eight limbs a step in SIMD (faster than four a step: docs/benchmarks/prime-checker.md, "Figures
 * moved out of code comments"). The count is rounded up to whole steps: every limb a step reads past a column pairs with a zero pad
 * limb, of y or v below column k and of x or u from column k on.
 */
// @ts-ignore: decorator
@inline
function dot2(x: usize, y: usize, u: usize, v: usize, count: i32): void {
  for (let steps = (count + 7) >> 3; steps > 0; steps -= STEPS2) {
    const end = x + (usize(min(steps, STEPS2)) << 5)
    let s = i64x2.splat(0)
    do {
      const xy = i64x2.add(prod4(x, y, 0), prod4(x, y, 16))
      s = i64x2.add(s, i64x2.add(xy, i64x2.add(prod4(u, v, 0), prod4(u, v, 16))))
      x += 32
      y += 32
      u += 32
      v += 32
    } while (x < end)
    fold(lanes(s))
  }
}

/** Adds sum over t < count of x[t] y[t] to HI, LO, in whole steps as dot2. */
// @ts-ignore: decorator
@inline
function dot1(x: usize, y: usize, count: i32): void {
  for (let steps = (count + 7) >> 3; steps > 0; steps -= 2 * STEPS2) {
    const end = x + (usize(min(steps, 2 * STEPS2)) << 5)
    let s = i64x2.splat(0)
    do {
      s = i64x2.add(s, i64x2.add(prod4(x, y, 0), prod4(x, y, 16)))
      x += 32
      y += 32
    } while (x < end)
    fold(lanes(s))
  }
}

/** Adds 2 sum over t < count of x[t] y[t] to HI, LO, exactly count terms: the cross products of sqr28. */
// @ts-ignore: decorator
@inline
function dotPairs(x: usize, y: usize, count: i32): void {
  while (count >= 4) {
    // 124 products, doubled, stay below 2^64.
    const c = min(count, 124) & ~3
    const end = x + (usize(c) << 2)
    let s = i64x2.splat(0)
    do {
      s = i64x2.add(s, prod4(x, y, 0))
      x += 16
      y += 16
    } while (x < end)
    fold(lanes(s) << 1)
    count -= c
  }
  let s: u64 = 0
  for (let t = 0; t < count; t++) s += prod(x, y, usize(t) << 2)
  fold(s << 1)
}

/** y[t] = x[k - 1 - t]. */
function reverse(y: usize, x: usize): void {
  const k = K
  for (let t = 0; t < k; t++) store<u32>(y + (usize(t) << 2), load<u32>(x + (usize(k - 1 - t) << 2)))
}

/**
 * Ends column i: with the sum in HI, LO plus the carry in, sets m_i (below k) so that the column clears, or
 * stores the column's digit into r (from k on); returns the carry out.
 */
// @ts-ignore: decorator
@inline
function endColumn(r: usize, i: i32, carry: u64): u64 {
  let v = carry + LO
  if (i < K) {
    const m = (u32(v) * NINV) & MASK32
    store<u32>(MPTR + (usize(i) << 2), m)
    v += u64(m) * limb(NPTR, 0)
  } else {
    store<u32>(r + (usize(i - K) << 2), u32(v & MASK))
  }
  return (v >> BITS28) + HI
}

/**
 * r = a b / R mod n for a, b < n; r may alias a or b, since column i reads only limbs above i - k of a and b.
 * Columns below k clear their low digit with m_i n; the m_j not yet known are zero, so both sums run together.
 */
export function mul28(r: usize, a: usize, b: usize): void {
  const k = K
  if (k >= KARATSUBA_MIN_LIMBS) {
    karatsuba(TPTR, a, b, k, SCRATCH)
    redc(r)
    return
  }
  memory.fill(MPTR, 0, usize(k) << 2)
  reverse(REVPTR, b)
  let carry: u64 = 0
  for (let i = 0; i < 2 * k - 1; i++) {
    const lo = max(0, i - k + 1)
    const hi = min(i, k - 1)
    HI = 0
    LO = 0
    const off = usize(lo) << 2
    const rev = usize(k - 1 - i + lo) << 2
    dot2(a + off, REVPTR + rev, MPTR + off, NREVPTR + rev, hi - lo + 1)
    carry = endColumn(r, i, carry)
  }
  finish(r, carry)
}

/** r = a^2 / R mod n for a < n: each cross product a_j a_(i-j) appears twice, so half of them are summed. */
export function sqr28(r: usize, a: usize): void {
  const k = K
  if (k < SQR_MIN_LIMBS) {
    mul28(r, a, a)
    return
  }
  memory.fill(MPTR, 0, usize(k) << 2)
  reverse(REVPTR, a)
  let carry: u64 = 0
  for (let i = 0; i < 2 * k - 1; i++) {
    const lo = max(0, i - k + 1)
    const hi = min(i, k - 1)
    HI = 0
    LO = 0
    const off = usize(lo) << 2
    const rev = usize(k - 1 - i + lo) << 2
    // Pairs j < i - j, doubled, then the square a_(i/2)^2 when i is even.
    const pairs = (i - 2 * lo + 1) >> 1
    dotPairs(a + off, REVPTR + rev, pairs)
    if ((i & 1) == 0) {
      const d = limb(a, i >> 1)
      fold(d * d)
    }
    dot1(MPTR + off, NREVPTR + rev, hi - lo + 1)
    carry = endColumn(r, i, carry)
  }
  finish(r, carry)
}

/** r = T / R mod n for the full product T < n R in TPTR: the columns of mul28 with T's limb added to each. */
function redc(r: usize): void {
  const k = K
  memory.fill(MPTR, 0, usize(k) << 2)
  let carry: u64 = 0
  for (let i = 0; i < 2 * k - 1; i++) {
    const lo = max(0, i - k + 1)
    const hi = min(i, k - 1)
    HI = 0
    LO = limb(TPTR, i)
    const off = usize(lo) << 2
    dot1(MPTR + off, NREVPTR + (usize(k - 1 - i + lo) << 2), hi - lo + 1)
    carry = endColumn(r, i, carry)
  }
  finish(r, carry + limb(TPTR, 2 * k - 1))
}

/**
 * r = a b over 2n limbs (Karatsuba and Ofman 1962, subtractive form): with h = ceil(n/2), a = a1 2^(28h) + a0
 * and b likewise, a b = z2 2^(56h) + (z0 + z2 - (a0 - a1)(b0 - b1)) 2^(28h) + z0, where z0 = a0 b0, z2 = a1 b1.
 * |a0 - a1| and |b0 - b1| stay in h limbs of 28 bits, so every product recurses on normalized limbs.
 */
function karatsuba(r: usize, a: usize, b: usize, n: i32, scratch: usize): void {
  if (n <= KARATSUBA_BASE_LIMBS) {
    mulColumns(r, a, b, n)
    return
  }
  const h = (n + 1) >> 1
  const l = n - h
  const hb = usize(h) << 2
  const da = scratch
  const db = scratch + hb
  const dm = scratch + 2 * hb
  const negative = absDiff(da, a, a + hb, h, l) != absDiff(db, b, b + hb, h, l)
  karatsuba(dm, da, db, h, scratch + 4 * hb)
  karatsuba(r, a, b, h, scratch + 4 * hb)
  karatsuba(r + 2 * hb, a + hb, b + hb, l, scratch + 4 * hb)
  addMiddle(r, n, h, l, dm, negative, scratch + 4 * hb)
}

/** d = |x - y| over h limbs, x of h limbs and y of l <= h; returns whether x < y. */
function absDiff(d: usize, x: usize, y: usize, h: i32, l: i32): bool {
  let less = false
  // y's missing top limb (l = h - 1) counts as zero.
  for (let i = h - 1; i >= 0; i--) {
    const xi = load<u32>(x + (usize(i) << 2))
    const yi = i < l ? load<u32>(y + (usize(i) << 2)) : 0
    if (xi != yi) {
      less = xi < yi
      break
    }
  }
  const p = less ? y : x
  const q = less ? x : y
  let borrow: i64 = 0
  for (let i = 0; i < h; i++) {
    const off = usize(i) << 2
    const pi = i < l || !less ? i64(load<u32>(p + off)) : 0
    const qi = i < l || less ? i64(load<u32>(q + off)) : 0
    const v = pi - qi + borrow
    store<u32>(d + off, u32(v) & MASK32)
    borrow = v >> BITS28
  }
  return less
}

/**
 * Adds (z0 + z2 -+ dm) 2^(28h) into r, whose low 2h limbs hold z0 and high 2l limbs z2; dm (2h limbs) is
 * (a0 - a1)(b0 - b1) in absolute value, subtracted unless negative. The middle term is summed first in
 * 2h + 1 limbs of mid, as it is never negative.
 */
function addMiddle(r: usize, n: i32, h: i32, l: i32, dm: usize, negative: bool, mid: usize): void {
  const z2 = r + (usize(h) << 3)
  let carry: i64 = 0
  for (let i = 0; i < 2 * h; i++) {
    const off = usize(i) << 2
    const d = i64(load<u32>(dm + off))
    let v = i64(load<u32>(r + off)) + carry + (negative ? d : -d)
    if (i < 2 * l) v += i64(load<u32>(z2 + off))
    store<u32>(mid + off, u32(v) & MASK32)
    carry = v >> BITS28
  }
  store<u32>(mid + (usize(2 * h) << 2), u32(carry))
  const rh = r + (usize(h) << 2)
  let c: u32 = 0
  for (let i = 0; i < 2 * n - h; i++) {
    const off = usize(i) << 2
    const s = load<u32>(rh + off) + (i <= 2 * h ? load<u32>(mid + off) : 0) + c
    store<u32>(rh + off, s & MASK32)
    c = s >> BITS28
    if (i > 2 * h && c == 0) break
  }
}

/** r = a b over 2n limbs by columns, with b reversed so that both walk up (n <= 255 keeps a column in a u64). */
function mulColumns(r: usize, a: usize, b: usize, n: i32): void {
  for (let t = 0; t < n; t++) store<u32>(BREVPTR + (usize(t) << 2), load<u32>(b + (usize(n - 1 - t) << 2)))
  let carry: u64 = 0
  for (let i = 0; i < 2 * n - 1; i++) {
    const lo = max(0, i - n + 1)
    const count = min(i, n - 1) - lo + 1
    const x = a + (usize(lo) << 2)
    const y = BREVPTR + (usize(n - 1 - i + lo) << 2)
    let v = i64x2.splat(0)
    let t = 0
    for (; t + 4 <= count; t += 4) v = i64x2.add(v, prod4(x, y, usize(t) << 2))
    let s = carry + lanes(v)
    for (; t < count; t++) s += prod(x, y, usize(t) << 2)
    store<u32>(r + (usize(i) << 2), u32(s & MASK))
    carry = s >> BITS28
  }
  store<u32>(r + (usize(2 * n - 1) << 2), u32(carry))
}

/** Stores the top digit; the result is below 2n, so one conditional subtraction reduces it. */
// @ts-ignore: decorator
@inline
function finish(r: usize, carry: u64): void {
  store<u32>(r + (usize(K - 1) << 2), u32(carry & MASK))
  if (carry >> BITS28 != 0 || !lessThanN(r)) subN(r, r, NPTR)
}

function lessThanN(x: usize): bool {
  for (let i = K - 1; i >= 0; i--) {
    const a = load<u32>(x + (usize(i) << 2))
    const b = load<u32>(NPTR + (usize(i) << 2))
    if (a != b) return a < b
  }
  return false
}

/** r = x - y over k limbs; returns the borrow out. */
function subN(r: usize, x: usize, y: usize): i64 {
  let borrow: i64 = 0
  for (let i = 0; i < K; i++) {
    const off = usize(i) << 2
    const d = i64(load<u32>(x + off)) - i64(load<u32>(y + off)) + borrow
    store<u32>(r + off, u32(d) & MASK32)
    borrow = d >> BITS28
  }
  return borrow
}

/** r = a + b mod n for a, b < n. */
export function add28(r: usize, a: usize, b: usize): void {
  let carry: u32 = 0
  for (let i = 0; i < K; i++) {
    const off = usize(i) << 2
    const s = load<u32>(a + off) + load<u32>(b + off) + carry
    store<u32>(r + off, s & MASK32)
    carry = s >> BITS28
  }
  if (carry != 0 || !lessThanN(r)) subN(r, r, NPTR)
}

/** r = a - b mod n for a, b < n. */
export function sub28(r: usize, a: usize, b: usize): void {
  if (subN(r, a, b) == 0) return
  let carry: u32 = 0
  for (let i = 0; i < K; i++) {
    const off = usize(i) << 2
    const s = load<u32>(r + off) + load<u32>(NPTR + off) + carry
    store<u32>(r + off, s & MASK32)
    carry = s >> BITS28
  }
}

export function copy28(r: usize, a: usize): void {
  memory.copy(r, a, usize(K) << 2)
}

export function equal28(a: usize, b: usize): bool {
  return memory.compare(a, b, usize(K) << 2) == 0
}

export function isZero28(a: usize): bool {
  for (let i = 0; i < K; i++) if (load<u32>(a + (usize(i) << 2)) != 0) return false
  return true
}

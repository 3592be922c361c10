// Montgomery multiplication modulo an odd n of k 32-bit limbs (Montgomery 1985), coarsely integrated operand
// scanning (Koc, Acar and Kaliski 1996): one pass per limb of a both adds a_i b and the multiple of n that
// clears the low limb, so no division ever happens. Residues live in linear memory as k little-endian limbs,
// in Montgomery form x R mod n with R = 2^(32k).
//
// Memory: the modulus, then a (k + 2)-limb accumulator, then numbered slots of k limbs each for callers.

export const MAX_LIMBS = 1024

let K: i32 = 0
let NINV: u32 = 0
let NPTR: usize = 0
let TPTR: usize = 0
let SLOTS: usize = 0
let STRIDE: usize = 0

/** Where the k-limb modulus goes before setModulus, and the first byte past the fixed layout. */
export function modulusPtr(): usize {
  return (__heap_base + 15) & ~15
}

export function slotPtr(i: i32): usize {
  return SLOTS + usize(i) * STRIDE
}

/** Reads the modulus that the caller stored at modulusPtr(); slots are laid out for k limbs. */
export function setModulus(k: i32): void {
  K = k
  NPTR = modulusPtr()
  TPTR = NPTR + usize(MAX_LIMBS) * 4
  SLOTS = TPTR + usize(MAX_LIMBS + 2) * 4
  STRIDE = usize(k) * 4
  const n0 = load<u32>(NPTR)
  // -n^-1 mod 2^32 by Newton's iteration, so that t + m n clears the low limb.
  let x = n0
  for (let i = 0; i < 4; i++) x *= 2 - n0 * x
  NINV = 0 - x
}

export function limbs(): i32 {
  return K
}

/**
 * r = a b / R mod n; r may alias a or b. The first pass, on an accumulator that is still zero, writes it
 * without reading it, and the result is copied limb by limb: memory.fill and memory.copy are calls into the
 * engine that cost as much as a whole 3-limb product.
 */
export function mulN(r: usize, a: usize, b: usize): void {
  const k = K
  const t = TPTR
  pass(u64(load<u32>(a)), b, false)
  for (let i = 1; i < k; i++) pass(u64(load<u32>(a + (usize(i) << 2))), b, true)
  // t < 2n: one conditional subtraction.
  if (load<u32>(t + (usize(k) << 2)) != 0 || !lessThanN(t)) subN(r, t)
  else for (let j = 0; j < k; j++) store<u32>(r + (usize(j) << 2), load<u32>(t + (usize(j) << 2)))
}

/** One CIOS pass: t = (t + ai b + m n) / 2^32, with t read only when `accumulate` (a constant at each call). */
// @ts-ignore: decorator
@inline
function pass(ai: u64, b: usize, accumulate: bool): void {
  const k = K
  const t = TPTR
  const n = NPTR
  let s1 = (accumulate ? u64(load<u32>(t)) : 0) + ai * u64(load<u32>(b))
  let c1 = s1 >> 32
  const m = u64(u32(s1) * NINV)
  let s2 = u64(u32(s1)) + m * u64(load<u32>(n))
  let c2 = s2 >> 32
  for (let j = 1; j < k; j++) {
    const off = usize(j) << 2
    s1 = (accumulate ? u64(load<u32>(t + off)) : 0) + ai * u64(load<u32>(b + off)) + c1
    c1 = s1 >> 32
    s2 = u64(u32(s1)) + m * u64(load<u32>(n + off)) + c2
    c2 = s2 >> 32
    store<u32>(t + off - 4, u32(s2))
  }
  const top = (accumulate ? u64(load<u32>(t + (usize(k) << 2))) : 0) + c1 + c2
  store<u32>(t + (usize(k - 1) << 2), u32(top))
  store<u32>(t + (usize(k) << 2), u32(top >> 32))
}

function lessThanN(x: usize): bool {
  for (let i = K - 1; i >= 0; i--) {
    const off = usize(i) << 2
    const a = load<u32>(x + off)
    const b = load<u32>(NPTR + off)
    if (a != b) return a < b
  }
  return false
}

/** r = x - n over k limbs (the borrow out of the top cancels x's carry limb). */
function subN(r: usize, x: usize): void {
  let borrow: i64 = 0
  for (let i = 0; i < K; i++) {
    const off = usize(i) << 2
    const d = i64(load<u32>(x + off)) - i64(load<u32>(NPTR + off)) + borrow
    store<u32>(r + off, u32(d))
    borrow = d >> 32
  }
}

/** r = a + b mod n for a, b < n. */
export function addN(r: usize, a: usize, b: usize): void {
  let carry: u64 = 0
  for (let i = 0; i < K; i++) {
    const off = usize(i) << 2
    const s = u64(load<u32>(a + off)) + u64(load<u32>(b + off)) + carry
    store<u32>(r + off, u32(s))
    carry = s >> 32
  }
  if (carry != 0 || !lessThanN(r)) subN(r, r)
}

/** r = a - b mod n for a, b < n. */
export function subModN(r: usize, a: usize, b: usize): void {
  let borrow: i64 = 0
  for (let i = 0; i < K; i++) {
    const off = usize(i) << 2
    const d = i64(load<u32>(a + off)) - i64(load<u32>(b + off)) + borrow
    store<u32>(r + off, u32(d))
    borrow = d >> 32
  }
  if (borrow != 0) {
    let carry: u64 = 0
    for (let i = 0; i < K; i++) {
      const off = usize(i) << 2
      const s = u64(load<u32>(r + off)) + u64(load<u32>(NPTR + off)) + carry
      store<u32>(r + off, u32(s))
      carry = s >> 32
    }
  }
}

export function copyN(r: usize, a: usize): void {
  memory.copy(r, a, usize(K) << 2)
}

export function equalN(a: usize, b: usize): bool {
  for (let i = 0; i < K; i++) {
    const off = usize(i) << 2
    if (load<u32>(a + off) != load<u32>(b + off)) return false
  }
  return true
}

export function isZeroN(a: usize): bool {
  for (let i = 0; i < K; i++) if (load<u32>(a + (usize(i) << 2)) != 0) return false
  return true
}

/** Bit i of the modulus. */
export function modulusBit(i: i32): u32 {
  return (load<u32>(NPTR + (usize(i >> 5) << 2)) >> u32(i & 31)) & 1
}

export function copySlot(dst: i32, src: i32): void {
  copyN(slotPtr(dst), slotPtr(src))
}

// Montgomery arithmetic modulo an odd n < 2^64 (Montgomery 1985), on native u64 words. Residues x are kept as
// xR mod n with R = 2^64, so a product needs no division: REDC turns a 128-bit T into T / R mod n.

export let N: u64 = 0
/** n^-1 mod 2^64 (the positive inverse, so REDC subtracts instead of adds). */
let NINV: u64 = 0
/** R mod n: the Montgomery form of 1. */
export let ONE: u64 = 0
/** R^2 mod n, to bring small integers into Montgomery form. */
let R2: u64 = 0

/** The high word of a 64x64-bit product: wasm has only the low word, so four 32x32 partial products. */
// @ts-ignore: decorator
@inline
export function mulhi(a: u64, b: u64): u64 {
  const a0 = a & 0xffffffff
  const a1 = a >> 32
  const b0 = b & 0xffffffff
  const b1 = b >> 32
  const p00 = a0 * b0
  const p01 = a0 * b1
  const p10 = a1 * b0
  const mid = (p00 >> 32) + (p01 & 0xffffffff) + (p10 & 0xffffffff)
  return a1 * b1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)
}

export function setup64(n: u64): void {
  N = n
  // Newton's iteration doubles the correct low bits: n * n = 1 (mod 8), then 6, 12, 24, 48, 96 bits.
  let x = n
  for (let i = 0; i < 5; i++) x *= 2 - n * x
  NINV = x
  ONE = (0 - n) % n
  let r2 = ONE
  for (let i = 0; i < 64; i++) r2 = add64(r2, r2)
  R2 = r2
}

/** a * b / R mod n for a, b < n: the low words of T and m * n agree, so only the high words are subtracted. */
// @ts-ignore: decorator
@inline
export function mul64(a: u64, b: u64): u64 {
  const hi = mulhi(a, b)
  const m = a * b * NINV
  const u = mulhi(m, N)
  return hi >= u ? hi - u : hi - u + N
}

/** a * a / R mod n: a square's two middle partial products are one, so its high word takes three of them. */
// @ts-ignore: decorator
@inline
export function sqr64(a: u64): u64 {
  const a0 = a & 0xffffffff
  const a1 = a >> 32
  const p00 = a0 * a0
  const p01 = a0 * a1
  const mid = (p00 >> 32) + ((p01 & 0xffffffff) << 1)
  const hi = a1 * a1 + ((p01 >> 32) << 1) + (mid >> 32)
  const m = a * a * NINV
  const u = mulhi(m, N)
  return hi >= u ? hi - u : hi - u + N
}

// @ts-ignore: decorator
@inline
export function add64(a: u64, b: u64): u64 {
  const s = a + b
  // s < a is a carry out of 64 bits; wrapping s - N is then still right.
  return s < a || s >= N ? s - N : s
}

// @ts-ignore: decorator
@inline
export function sub64(a: u64, b: u64): u64 {
  return a >= b ? a - b : a - b + N
}

export function toMont64(x: u64): u64 {
  return mul64(x % N, R2)
}

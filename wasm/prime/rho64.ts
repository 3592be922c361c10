// Pollard's rho with Brent's cycle detection and batched gcds (Brent 1980), in 64-bit Montgomery form.
import { mul64, ONE, setup64, sqr64, sub64 } from './mont64'

/** Steps between two gcds. */
const BATCH: u32 = 64

export function gcd64(a: u64, b: u64): u64 {
  if (a == 0) return b
  if (b == 0) return a
  // Binary gcd: shifts and subtractions instead of 64-bit divisions.
  const shift = ctz(a | b)
  a >>= ctz(a)
  do {
    b >>= ctz(b)
    if (a > b) {
      const t = a
      a = b
      b = t
    }
    b -= a
  } while (b != 0)
  return a << shift
}

/**
 * A divisor of the odd composite n (n itself when this c fails), or 0 when maxSteps iterations of
 * x -> x^2 + c pass without one. In Montgomery form the map is x -> x^2 / R + c, which is x -> x^2 + c / R
 * on the plain residues: as good a polynomial.
 */
export function rho64(n: u64, c: u64, maxSteps: u32): u64 {
  setup64(n)
  const cm = c % n
  let y: u64 = ONE
  let x = y
  let ys = y
  let q = ONE
  let g: u64 = 1
  let steps: u32 = 0
  for (let r: u32 = 1; g == 1; r <<= 1) {
    x = y
    for (let i: u32 = 0; i < r; i++) y = add64mod(sqr64(y), cm, n)
    for (let k: u32 = 0; k < r && g == 1; k += BATCH) {
      ys = y
      const end: u32 = min(BATCH, r - k)
      for (let i: u32 = 0; i < end; i++) {
        y = add64mod(sqr64(y), cm, n)
        q = mul64(q, sub64(x, y))
      }
      g = gcd64(q, n)
      steps += end
    }
    steps += r
    if (g == 1 && steps > maxSteps) return 0
  }
  if (g != n) return g
  // The batch product hit 0 mod n: replay it one step at a time.
  do {
    ys = add64mod(sqr64(ys), cm, n)
    g = gcd64(sub64(x, ys), n)
  } while (g == 1)
  return g
}

// @ts-ignore: decorator
@inline
function add64mod(a: u64, b: u64, n: u64): u64 {
  const s = a + b
  return s < a || s >= n ? s - n : s
}

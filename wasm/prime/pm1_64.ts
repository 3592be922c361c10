// Pollard's p - 1 (Pollard 1974) for n < 2^64, in 64-bit Montgomery form: a prime p | n is found when p - 1
// is a product of primes up to B1 times at most one prime up to B2. Before rho on balanced 64-bit
// semiprimes: about a third of 32-bit primes p have such a p - 1, and both bounds together cost a few
// percent of rho's expected steps, so either factor's luck saves the whole rho run.
import { add64, mul64, ONE, setup64, sqr64, sub64 } from './mont64'
import { gcd64 } from './rho64'
import { largestPower, ODD_PRIMES, oddPrime } from './trial64'

/** x^e in Montgomery form, left to right. */
function pow64(x: u64, e: u64): u64 {
  let r = x
  for (let bit = 62 - i32(clz(e)); bit >= 0; bit--) {
    r = sqr64(r)
    if (((e >> u64(bit)) & 1) != 0) r = mul64(r, x)
  }
  return r
}

/** Powers x^2, x^4, ..., x^(2 MAX_GAP/2): the gaps between consecutive primes below 2^16 are at most 72. */
const MAX_HALF_GAP = 36
const GAPS = memory.data(MAX_HALF_GAP * 8 + 8, 8)

/**
 * A nontrivial divisor of the odd composite n from p - 1 with bounds b1 <= b2 < 2^16, or 0 when there is
 * none (including when every prime factor of n was caught at once).
 */
export function pminus1_64(n: u64, b1: u32, b2: u32): u64 {
  setup64(n)
  // Stage 1: x = 2^E with E the product of the largest powers of the primes up to b1.
  let x = add64(ONE, ONE)
  for (let k: u64 = 1; k <= u64(b1); k <<= 1) x = sqr64(x)
  let i = 0
  for (; i < ODD_PRIMES; i++) {
    const p = oddPrime(i)
    if (p > b1) break
    x = pow64(x, largestPower(p, b1))
  }
  let g = gcd64(sub64(x, ONE), n)
  if (g != 1) return g == n ? 0 : g
  if (i >= ODD_PRIMES) return 0
  // Stage 2: x^q for each prime q in (b1, b2], stepping from one prime to the next by a stored even power.
  const x2 = sqr64(x)
  store<u64>(GAPS + 8, x2)
  for (let h = 2; h <= MAX_HALF_GAP; h++) store<u64>(GAPS + (usize(h) << 3), mul64(load<u64>(GAPS + (usize(h - 1) << 3)), x2))
  let previous = oddPrime(i)
  let y = pow64(x, u64(previous))
  let product = sub64(y, ONE)
  for (i++; i < ODD_PRIMES; i++) {
    const q = oddPrime(i)
    if (q > b2) break
    y = mul64(y, load<u64>(GAPS + (usize((q - previous) >> 1) << 3)))
    product = mul64(product, sub64(y, ONE))
    previous = q
  }
  g = gcd64(product, n)
  return g == 1 || g == n ? 0 : g
}

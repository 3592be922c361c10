// Deterministic primality for n < 2^64: trial division, a base-2 strong probable-prime test, then an extra
// strong Lucas test (Baillie-Wagstaff 1980; Grantham 2001 for the extra strong form). No composite below 2^64
// passes both (Feitsma's list of base-2 strong pseudoprimes, checked against the Lucas tests by Gilchrist
// and by Jacobsen), so two tests decide where Miller-Rabin needs seven bases.
import { add64, mul64, N, ONE, setup64, sub64, toMont64 } from './mont64'

// Static data, not the runtime's heap: montn.ts lays out its memory from __heap_base.
const TRIAL_PRIMES = memory.data<u32>([3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97])
const TRIAL_COUNT = 24
/** p^-1 mod 2^64 and floor((2^64 - 1) / p): p divides n exactly when n * p^-1 <= the bound (Granlund-Montgomery). */
const TRIAL_INV = memory.data(TRIAL_COUNT * 8)
const TRIAL_MAX = memory.data(TRIAL_COUNT * 8)
for (let i = 0; i < TRIAL_COUNT; i++) {
  const p = u64(load<u32>(TRIAL_PRIMES + (usize(i) << 2)))
  let x = p
  for (let j = 0; j < 5; j++) x *= 2 - p * x
  store<u64>(TRIAL_INV + (usize(i) << 3), x)
  store<u64>(TRIAL_MAX + (usize(i) << 3), u64.MAX_VALUE / p)
}

export function isPrime64(n: u64): bool {
  if (n < 2) return false
  if ((n & 1) == 0) return n == 2
  for (let i = 0; i < TRIAL_COUNT; i++) {
    const off = usize(i) << 3
    if (n * load<u64>(TRIAL_INV + off) <= load<u64>(TRIAL_MAX + off)) return n == u64(load<u32>(TRIAL_PRIMES + (usize(i) << 2)))
  }
  // Every n below 101^2 without a factor below 101 is prime.
  if (n < 10201) return true
  setup64(n)
  return isStrongProbablePrime2(n) && !isSquare64(n) && isExtraStrongLucas(n)
}

/** 2^d = 1 or 2^(d 2^r) = -1 (mod n) for some r < s, with n - 1 = d 2^s; multiplying by 2 is an addition. */
function isStrongProbablePrime2(n: u64): bool {
  const s = ctz(n - 1)
  const d = (n - 1) >> s
  const minusOne = N - ONE
  let x = ONE
  for (let bit = 63 - i32(clz(d)); bit >= 0; bit--) {
    x = mul64(x, x)
    if ((d >> u64(bit)) & 1) x = add64(x, x)
  }
  if (x == ONE || x == minusOne) return true
  for (let r: u64 = 1; r < s; r++) {
    x = mul64(x, x)
    if (x == minusOne) return true
    if (x == ONE) return false
  }
  return false
}

export function isSquare64(n: u64): bool {
  let r = u64(Math.sqrt(f64(n)))
  // The double root may be off by one either way near 2^64.
  while (r > 0xffffffff || r * r > n) r--
  while (r < 0xffffffff && (r + 1) * (r + 1) <= n) r++
  return r * r == n
}

/** Jacobi symbol (a/n) for odd n, a >= 0. */
export function jacobi64(a: u64, n: u64): i32 {
  let x = a % n
  let m = n
  let result = 1
  while (x != 0) {
    while ((x & 1) == 0) {
      x >>= 1
      const r = m & 7
      if (r == 3 || r == 5) result = -result
    }
    const t = x
    x = m
    m = t
    if ((x & 3) == 3 && (m & 3) == 3) result = -result
    x %= m
  }
  return m == 1 ? result : 0
}

/**
 * Extra strong Lucas test with Q = 1 and the first P >= 3 whose D = P^2 - 4 has (D/n) = -1. With
 * n + 1 = m 2^s: n passes when U_m = 0 and V_m = +-2, or V_(m 2^r) = 0 for some r < s - 1. Only V is
 * walked (V_2k = V_k^2 - 2, V_2k+1 = V_k V_k+1 - P); U_m = 0 exactly when 2 V_m+1 = P V_m, as D U_m = 2 V_m+1 - P V_m.
 */
function isExtraStrongLucas(n: u64): bool {
  let p: u64 = 3
  for (;; p++) {
    const j = jacobi64(p * p - 4, n)
    if (j == -1) break
    // (D/n) = 0 with D < n means a common factor; n is not a square, so the search ends.
    if (j == 0 && p * p - 4 < n) return false
  }
  const m1 = n + 1
  const s = ctz(m1)
  const m = m1 >> s
  const pm = toMont64(p)
  const two = add64(ONE, ONE)
  let v = two
  let w = pm
  for (let bit = 63 - i32(clz(m)); bit >= 0; bit--) {
    if ((m >> u64(bit)) & 1) {
      v = sub64(mul64(v, w), pm)
      w = sub64(mul64(w, w), two)
    } else {
      w = sub64(mul64(v, w), pm)
      v = sub64(mul64(v, v), two)
    }
  }
  if (add64(w, w) == mul64(pm, v) && (v == two || v == N - two)) return true
  for (let r: u64 = 0; r + 1 < s; r++) {
    if (v == 0) return true
    v = sub64(mul64(v, v), two)
  }
  return false
}

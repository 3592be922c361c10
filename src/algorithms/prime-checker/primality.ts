import { abs, bitLength, isqrt, jacobi, modPow } from './bigint-math.js'
import { isBailliePSWCore } from './bpsw.js'
import { BITS28, kernel, LIMIT_64, MAX_LIMBS28 } from './kernel.js'
import { isPrimeSmall, LIMIT_32 } from './small.js'
import { smallestSmallFactor } from './trial-division.js'

export type PrimalityMethod = 'trial_division' | 'deterministic_miller_rabin' | 'baillie_psw'

/**
 * Baillie-PSW's trial division: a few hundred primes remove most composites for the cost of one modPow step.
 */
const BPSW_TRIAL_LIMIT = 2000

/**
 * The largest n the kernel's Baillie-PSW takes: 35840 bits, about 10,800 digits (the default limit is 4300).
 */
const KERNEL_MAX_BITS = BITS28 * MAX_LIMBS28

/** Which test isPrime uses for n; the sign is ignored. */
export function primalityMethod(n: bigint): PrimalityMethod {
  const size = abs(n)
  if (size < LIMIT_32) return 'trial_division'
  if (size < LIMIT_64) return 'deterministic_miller_rabin'
  return 'baillie_psw'
}

/**
 * Whether n is prime: exact below 2^64, Baillie-PSW above (no counterexample is known). Negatives are not
 * prime.
 */
export function isPrime(n: bigint): boolean {
  if (n < 2n) return false
  if (n < LIMIT_32) return isPrimeSmall(Number(n))
  if (n < LIMIT_64) return isPrime64(n)
  return isBailliePSW(n)
}

/**
 * Exact primality for n < 2^64 in the kernel (wasm/prime/prime64.ts): a base-2 strong test and an extra
 * strong Lucas test, which no composite below 2^64 passes. The reported method keeps its historic name.
 */
function isPrime64(n: bigint): boolean {
  return kernel.isPrime64(n) === 1
}

/** Baillie-PSW probable-prime test for any n; exact for n < 2^64 and far beyond. */
export function isBailliePSW(n: bigint): boolean {
  if (n < 2n) return false
  const p = smallestSmallFactor(n, BPSW_TRIAL_LIMIT)
  if (p !== undefined) return n === BigInt(p)
  if (n < LIMIT_64) return isPrime64(n)
  if (bitLength(n) <= KERNEL_MAX_BITS) return isBailliePSWCore(n)
  return isBailliePSWBigInt(n)
}

/**
 * The BigInt Baillie-PSW with Selfridge's strong Lucas test: the reference the kernel's is tested against,
 * and the test past the kernel's fixed memory (ALGOSERVE_MAX_DIGITS may allow such numbers).
 */
export function isBailliePSWBigInt(n: bigint): boolean {
  // The Lucas test needs a non-square n: for a square, no D has Jacobi symbol -1.
  return isStrongProbablePrime(n, 2n) && !isPerfectSquare(n) && isStrongLucasProbablePrime(n)
}

function isPerfectSquare(n: bigint): boolean {
  const root = isqrt(n)
  return root * root === n
}

/**
 * Strong probable-prime (Miller-Rabin) test of odd n > 2 to the given base: with n - 1 = d * 2^s and d odd,
 * either base^d = 1 or base^(d * 2^r) = -1 (mod n) for some r < s. A base that is 0 mod n fails.
 */
export function isStrongProbablePrime(n: bigint, base: bigint): boolean {
  if (n <= 2n || (n & 1n) === 0n) throw new RangeError('isStrongProbablePrime: n must be odd and > 2')
  let d = n - 1n
  let s = 0
  while ((d & 1n) === 0n) {
    d >>= 1n
    s++
  }
  let x = modPow(base, d, n)
  if (x === 1n || x === n - 1n) return true
  for (let r = 1; r < s; r++) {
    x = (x * x) % n
    if (x === n - 1n) return true
    // Once x is 1 it stays 1, so -1 can no longer appear.
    if (x === 1n) return false
  }
  return false
}

/**
 * Strong Lucas probable-prime test of odd n > 2 that is not a perfect square, with Selfridge's method A
 * parameters: the first D in 5, -7, 9, -11, ... with Jacobi(D/n) = -1, P = 1, Q = (1 - D) / 4.
 * With n + 1 = d * 2^s and d odd, n passes if U_d = 0 or V_(d * 2^r) = 0 (mod n) for some r < s.
 */
export function isStrongLucasProbablePrime(n: bigint): boolean {
  if (n <= 2n || (n & 1n) === 0n) throw new RangeError('isStrongLucasProbablePrime: n must be odd and > 2')
  const D = selfridgeD(n)
  if (D === undefined) return false
  const Q = (1n - D) / 4n
  // D and Q stay small signed numbers: multiplying by them is cheap, unlike by their residues mod n.
  const mod = (x: bigint): bigint => {
    const r = x % n
    return r < 0n ? r + n : r
  }
  // Halving mod odd n: an odd residue becomes even after adding n.
  const half = (x: bigint): bigint => ((x & 1n) === 0n ? x : x + n) >> 1n

  let d = n + 1n
  let s = 0
  while ((d & 1n) === 0n) {
    d >>= 1n
    s++
  }

  // Walk d's bits from the top keeping U_k, V_k and Q^k, starting from k = 1 (U_1 = 1, V_1 = P = 1):
  // doubling uses U_2k = U_k V_k, V_2k = V_k^2 - 2 Q^k; adding one uses U_k+1 = (U_k + V_k) / 2 and
  // V_k+1 = (D U_k + V_k) / 2 (with P = 1).
  let u = 1n
  let v = 1n
  let qk = mod(Q)
  for (const bit of d.toString(2).slice(1)) {
    u = (u * v) % n
    v = mod(v * v - 2n * qk)
    qk = (qk * qk) % n
    if (bit === '1') {
      const uNext = half(mod(u + v))
      v = half(mod(D * u + v))
      u = uNext
      qk = mod(qk * Q)
    }
  }
  if (u === 0n || v === 0n) return true
  for (let r = 1; r < s; r++) {
    v = mod(v * v - 2n * qk)
    if (v === 0n) return true
    qk = (qk * qk) % n
  }
  return false
}

/**
 * Selfridge's D for n, or undefined when some D shares a factor with n (so n is composite). Jacobi 0 with
 * |D| = n only says n = |D|, which the search steps over.
 */
function selfridgeD(n: bigint): bigint | undefined {
  for (let D = 5n; ; D = D > 0n ? -(D + 2n) : -D + 2n) {
    const j = jacobi(D, n)
    if (j === -1) return D
    if (j === 0 && abs(D) !== n) return undefined
  }
}

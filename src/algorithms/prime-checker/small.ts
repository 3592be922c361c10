import { SMALL_PRIMES } from './small-primes.js'

/** Below this bound every number is handled on plain Numbers: each has a prime factor in SMALL_PRIMES or is prime. */
export const SMALL_LIMIT = 2 ** 32

/** Primality of an integer 0 <= n < 2^32 by trial division. */
export function isPrimeSmall(n: number): boolean {
  if (n < 2) return false
  for (const p of SMALL_PRIMES) {
    if (p * p > n) return true
    if (n % p === 0) return n === p
  }
  // n >= 65521^2 with no factor up to 65521: since n < 2^32 = 65536^2, any factor would have shown up.
  return true
}

/** Prime factors of an integer 1 < n < 2^32, ascending, with multiplicity. */
export function factorSmall(n: number): number[] {
  const factors: number[] = []
  let rest = n
  for (const p of SMALL_PRIMES) {
    if (p * p > rest) break
    while (rest % p === 0) {
      factors.push(p)
      rest /= p
    }
  }
  // What is left has no factor up to its square root, so it is prime.
  if (rest > 1) factors.push(rest)
  return factors
}

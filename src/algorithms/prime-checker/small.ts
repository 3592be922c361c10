import { kernel } from './kernel.js'
import { SMALL_PRIMES } from './small-primes.js'

/**
 * Below this bound every number is settled by trial division: it has a prime factor below 2^16 or is prime.
 */
export const SMALL_LIMIT = 2 ** 32
/** SMALL_LIMIT as a BigInt. */
export const LIMIT_32 = BigInt(SMALL_LIMIT)

/**
 * Up to here trial division runs on Numbers; above, in the kernel (wasm/prime/trial64.ts), where a
 * prime costs a multiply and a compare instead of a floating-point remainder
 * (docs/benchmarks/prime-checker.md, "Figures moved out of code comments").
 */
const NUMBER_LIMIT = 2 ** 16

/** Primality of an integer 0 <= n < 2^32 by trial division. */
export function isPrimeSmall(n: number): boolean {
  if (n < NUMBER_LIMIT) return isPrimeByNumbers(n)
  return n % 2 !== 0 && kernel.trialFactor64(BigInt(n), 3) === 0
}

function isPrimeByNumbers(n: number): boolean {
  if (n < 2) return false
  for (const p of SMALL_PRIMES) {
    if (p * p > n) return true
    if (n % p === 0) return n === p
  }
  return true
}

/** Prime factors of an integer 1 < n < 2^32, ascending, with multiplicity. */
export function factorSmall(n: number): number[] {
  const factors: number[] = []
  let rest = n
  while (rest % 2 === 0) {
    factors.push(2)
    rest /= 2
  }
  // The kernel answers the smallest odd prime factor from a bound on; each one found is a bound for the next.
  for (let from = 3; rest >= NUMBER_LIMIT; ) {
    const p = kernel.trialFactor64(BigInt(rest), from)
    if (p === 0) {
      // No factor up to its square root: prime.
      factors.push(rest)
      return factors
    }
    factors.push(p)
    rest /= p
    from = p
  }
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

import { kernel, LIMIT_64, limbCount, TRIAL_LIMBS, writeLimbs } from './kernel.js'
import { SMALL_PRIMES } from './small-primes.js'

/**
 * The small primes in groups whose product is below 2^53: one BigInt remainder by a group's product, then
 * exact remainders on doubles, costs a third to a quarter of dividing by each prime.
 */
interface PrimeGroup {
  product: bigint
  primes: number[]
}

const GROUPS: PrimeGroup[] = groupPrimes()

function groupPrimes(): PrimeGroup[] {
  const groups: PrimeGroup[] = []
  let primes: number[] = []
  let product = 1
  for (const p of SMALL_PRIMES) {
    if (product * p >= 2 ** 53) {
      groups.push({ product: BigInt(product), primes })
      primes = []
      product = 1
    }
    primes.push(p)
    product *= p
  }
  groups.push({ product: BigInt(product), primes })
  return groups
}

/** The smallest prime below `limit` (at most 65536) that divides n > 0, or undefined. */
export function smallestSmallFactor(n: bigint, limit: number): number | undefined {
  for (const { product, primes } of GROUPS) {
    if ((primes[0] as number) >= limit) return undefined
    const r = Number(n % product)
    for (const p of primes) if (p < limit && r % p === 0) return p
  }
  return undefined
}

/**
 * Divides out the primes below 65536 from n > 0, stopping once p^2 exceeds the cofactor (which is then 1 or
 * prime). A composite cofactor is therefore left with prime factors above 2^16 only.
 */
export function trialDivide(n: bigint): { primes: bigint[]; rest: bigint } {
  if (n < LIMIT_64) return trialDivide64(n)
  if (n < LIMIT_LIMBS) return trialDivideLimbs(n)
  const primes: bigint[] = []
  let rest = n
  for (const { product, primes: group } of GROUPS) {
    const first = group[0] as number
    if (BigInt(first) * BigInt(first) > rest) break
    const r = Number(rest % product)
    for (const p of group) {
      if (r % p !== 0) continue
      const prime = BigInt(p)
      while (rest % prime === 0n) {
        primes.push(prime)
        rest /= prime
      }
    }
  }
  return { primes, rest }
}

/** trialFactorLimbs' limit: numbers of up to TRIAL_LIMBS 32-bit limbs, 2^160. */
const LIMIT_LIMBS = 1n << BigInt(32 * TRIAL_LIMBS)

/**
 * trialDivide from 2^64 to 2^160 (the quadratic sieve's sizes) in the kernel, a multiply-add per limb and a
 * multiply per prime, down to below 2^64, where trialDivide64 goes on: faster than a BigInt remainder per
 * group of primes or a loop on doubles here, which was deoptimised on every call
 * (docs/benchmarks/prime-checker.md, "Figures moved out of code comments").
 */
function trialDivideLimbs(n: bigint): { primes: bigint[]; rest: bigint } {
  const primes: bigint[] = []
  let rest = n
  while ((rest & 1n) === 0n) {
    primes.push(2n)
    rest >>= 1n
  }
  let from = 3
  while (rest >= LIMIT_64) {
    const k = limbCount(rest)
    writeLimbs(kernel.trialLimbsPtr(), rest, k)
    const p = kernel.trialFactorLimbs(k, from)
    if (p === 0) return { primes, rest }
    const prime = BigInt(p)
    while (rest % prime === 0n) {
      primes.push(prime)
      rest /= prime
    }
    from = p + 2
  }
  return trialDivide64(rest, from, primes)
}

/**
 * trialDivide below 2^64, where the kernel tests each prime with a multiply instead of a remainder: the odd
 * primes from `from` on, after the factors already in `primes`.
 */
function trialDivide64(n: bigint, from = 3, primes: bigint[] = []): { primes: bigint[]; rest: bigint } {
  let rest = n
  while ((rest & 1n) === 0n) {
    primes.push(2n)
    rest >>= 1n
  }
  for (let p = kernel.trialFactor64(rest, from); p !== 0; p = kernel.trialFactor64(rest, p + 2)) {
    const prime = BigInt(p)
    while (rest % prime === 0n) {
      primes.push(prime)
      rest /= prime
    }
  }
  return { primes, rest }
}

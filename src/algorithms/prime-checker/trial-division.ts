import { kernel } from './kernel.js'
import { SMALL_PRIMES } from './small-primes.js'

const LIMIT_64 = 1n << 64n

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

/** Limbs of LIMB_BITS bits: a limb times a residue below 2^16 stays below 2^42, and LIMBS of them add exactly. */
const LIMB_BITS = 26
const LIMBS = 6
const LIMIT_LIMBS = 1n << BigInt(LIMB_BITS * LIMBS)

/** 2^(26 k) mod p for every small prime p (at k * count + index), made on the first call. */
let limbPowers: Float64Array | undefined

function powers(): Float64Array {
  if (limbPowers) return limbPowers
  const count = SMALL_PRIMES.length
  const table = new Float64Array(LIMBS * count)
  SMALL_PRIMES.forEach((p, i) => {
    let power = 1
    for (let k = 0; k < LIMBS; k++) {
      table[k * count + i] = power
      power = (power * 2 ** LIMB_BITS) % p
    }
  })
  limbPowers = table
  return table
}

function toLimbs(n: bigint): number[] {
  const limbs: number[] = []
  for (let x = n; x > 0n; x >>= BigInt(LIMB_BITS)) limbs.push(Number(x & ((1n << BigInt(LIMB_BITS)) - 1n)))
  return limbs
}

/**
 * trialDivide from 2^64 to 2^156 (the quadratic sieve's sizes): n mod p as a sum of limbs times 2^(26 k) mod
 * p, one remainder on doubles per prime, where a BigInt remainder per group of primes took 0.33 ms at 20 digits.
 */
function trialDivideLimbs(n: bigint): { primes: bigint[]; rest: bigint } {
  const table = powers()
  const count = SMALL_PRIMES.length
  const primes: bigint[] = []
  let rest = n
  while ((rest & 1n) === 0n) {
    primes.push(2n)
    rest >>= 1n
  }
  let limbs = toLimbs(rest)
  // Exact once rest is small enough for p^2 > rest to matter.
  let size = Number(rest)
  for (let i = 1; i < count; i++) {
    const p = SMALL_PRIMES[i] as number
    if (p * p > size) break
    let sum = 0
    for (let k = 0; k < limbs.length; k++) sum += (limbs[k] as number) * (table[k * count + i] as number)
    // sum < 2^45: the quotient is correctly rounded and at least 2^-45 relatively away from an integer
    // unless p divides sum, so this test is exact, and a division costs far less than V8's double remainder.
    if (!Number.isInteger(sum / p)) continue
    const prime = BigInt(p)
    while (rest % prime === 0n) {
      primes.push(prime)
      rest /= prime
    }
    limbs = toLimbs(rest)
    size = Number(rest)
  }
  return { primes, rest }
}

/** trialDivide below 2^64, where the kernel tests each prime with a multiply instead of a remainder. */
function trialDivide64(n: bigint): { primes: bigint[]; rest: bigint } {
  const primes: bigint[] = []
  let rest = n
  while ((rest & 1n) === 0n) {
    primes.push(2n)
    rest >>= 1n
  }
  for (let p = kernel.trialFactor64(rest, 3); p !== 0; p = kernel.trialFactor64(rest, p + 2)) {
    const prime = BigInt(p)
    while (rest % prime === 0n) {
      primes.push(prime)
      rest /= prime
    }
  }
  return { primes, rest }
}

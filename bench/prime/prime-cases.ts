// Seeded, reproducible inputs for bench/prime/prime.ts: a seed gives the same numbers on every machine.
// Primality is the caller's predicate (the engine, for speed); bench/prime/prime.ts has PARI/GP confirm every
// number it uses.
import { isqrt } from '../../src/algorithms/prime-checker/bigint-math.js'
import { prng, randomBits } from '../../test/helpers/reference-math.js'

export type IsPrime = (n: bigint) => boolean

export interface Generator {
  /** A uniform integer in [lo, hi). */
  between(lo: bigint, hi: bigint): bigint
}

export function generator(seed: number): Generator {
  const next = prng(seed)
  return {
    between(lo, hi) {
      const span = hi - lo
      // 64 spare bits make the modulo bias negligible.
      return lo + (randomBits(next, span.toString(2).length + 64) % span)
    },
  }
}

/** A bench:prime row's generator: seeded by the bench seed and the row's name (see bench/prime/prime.ts). */
export function rowGenerator(seed: number, name: string): Generator {
  let hash = 2166136261
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 16777619) >>> 0
  return generator((seed ^ hash) >>> 0)
}

/** The first prime at or after a uniform odd start in [lo, hi), wrapping to lo. */
export function randomPrime(g: Generator, lo: bigint, hi: bigint, isPrime: IsPrime): bigint {
  let n = g.between(lo, hi) | 1n
  while (!isPrime(n)) {
    n += 2n
    if (n >= hi) n = lo | 1n
  }
  return n
}

export function randomPrimeBits(g: Generator, bits: number, isPrime: IsPrime): bigint {
  return randomPrime(g, 1n << BigInt(bits - 1), 1n << BigInt(bits), isPrime)
}

export function randomPrimeDigits(g: Generator, digits: number, isPrime: IsPrime): bigint {
  return randomPrime(g, 10n ** BigInt(digits - 1), 10n ** BigInt(digits), isPrime)
}

export function randomOdd64(g: Generator): bigint {
  return g.between(1n << 63n, 1n << 64n) | 1n
}

/** p q with p and q prime in [sqrt(lo), sqrt(hi)), so that lo <= p q < hi. */
export function balancedSemiprime(g: Generator, lo: bigint, hi: bigint, isPrime: IsPrime): bigint {
  const from = ceilSqrt(lo)
  const to = ceilSqrt(hi)
  for (;;) {
    const p = randomPrime(g, from, to, isPrime)
    const q = randomPrime(g, from, to, isPrime)
    if (p !== q && p * q >= lo && p * q < hi) return p * q
  }
}

/** The least x with x^2 >= n: stepping from a double's square root took ~10^11 steps past 30 digits. */
function ceilSqrt(n: bigint): bigint {
  const x = isqrt(n)
  return x * x === n ? x : x + 1n
}

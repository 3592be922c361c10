import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { multiplier } from '../../../src/algorithms/prime-checker/qs-multiplier.js'
import {
  prng,
  randomBits,
  randomPrimeOfDigits,
  refIsProbablePrime,
  refModPow,
  testSeed,
} from '../../helpers/reference-math.js'

const SEED = testSeed('qs-multiplier.test.ts')
const MULTIPLIERS = [1, 3, 5, 7, 11, 13, 15, 17, 19, 21, 23, 29, 31, 33, 35, 37, 39, 41, 43, 47, 51, 53, 55]

/** The odd primes 3 to 997, which rank the multipliers. */
function rankingPrimes(next: () => number): number[] {
  const primes: number[] = []
  for (let p = 3; p < 1000; p += 2) if (refIsProbablePrime(BigInt(p), next)) primes.push(p)
  return primes
}

/**
 * Silverman's score on BigInt symbols of kN itself: the 2-adic term, log(p) / p for p | k, 2 log(p) / (p - 1)
 * for kN a nonzero square mod p, less half the log of k; the best k, the first of equals.
 */
function referenceMultiplier(n: bigint, primes: number[]): number {
  let best = 1
  let bestScore = Number.NEGATIVE_INFINITY
  for (const k of MULTIPLIERS) {
    const kn = BigInt(k) * n
    const kn8 = Number(kn % 8n)
    let score = -0.5 * Math.log(k) + (kn8 === 1 ? 2 : kn8 === 5 ? 1 : 0.5) * Math.LN2
    for (const p of primes) {
      const r = kn % BigInt(p)
      if (k % p === 0) score += Math.log(p) / p
      else if (r !== 0n && refModPow(r, BigInt((p - 1) / 2), BigInt(p)) === 1n) {
        score += (2 * Math.log(p)) / (p - 1)
      }
    }
    if (score > bestScore) {
      bestScore = score
      best = k
    }
  }
  return best
}

describe("quadratic sieve's Knuth-Schroeppel multiplier", () => {
  test('picks m for m q^2: only k = m makes kN a square mod every small prime and 1 mod 8', () => {
    const next = prng(SEED)
    for (const m of [1, 3, 5, 7, 11, 15, 21, 43, 55]) {
      const q = randomPrimeOfDigits(next, 15)
      const n = BigInt(m) * q * q
      assert.equal(multiplier(n), m, `multiplier of ${m} * ${q}^2, seed ${SEED}`)
    }
  })

  test('agrees with the score computed on BigInt symbols of kN for random odd n', () => {
    const next = prng(SEED + 1)
    const primes = rankingPrimes(next)
    const chosen = new Set<number>()
    for (let round = 0; round < 200; round++) {
      const n = randomBits(next, 60 + (next() % 180)) | 1n
      const expected = referenceMultiplier(n, primes)
      chosen.add(expected)
      assert.equal(multiplier(n), expected, `multiplier of ${n}, seed ${SEED}`)
    }
    // Random n call on many of the multipliers, so the agreement is not on k = 1 alone.
    assert.ok(chosen.size >= 8, `only ${[...chosen].join(', ')} chosen, seed ${SEED}`)
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { factorBase, type Params, Sieve } from '../../../src/algorithms/prime-checker/qs-sieve.js'
import {
  prng,
  randomPrimeOfDigits,
  refIsProbablePrime,
  refModPow,
  testSeed,
} from '../../helpers/reference-math.js'

const SEED = testSeed('qs-sieve.test.ts')

/**
 * The relations of `polynomials` polynomials for a balanced semiprime of `digits` digits, each checked
 * against BigInt: y^2 = (-1)^neg * prod primes[i] * prod large (mod n), large primes prime and above the
 * factor base. Returns how many were full, single partial and double partial.
 */
function checkRelations(digits: number, k: number, p: Params, polynomials: number): number[] {
  const next = prng(SEED + digits)
  const n =
    randomPrimeOfDigits(next, Math.floor(digits / 2)) * randomPrimeOfDigits(next, Math.ceil(digits / 2))
  const kn = BigInt(k) * n
  const fb = factorBase(n, kn, p.primes)
  assert.ok(typeof fb !== 'bigint', `a factor-base prime divides ${n}, seed ${SEED}`)
  const primes = fb.primes.slice()
  const pMax = primes[primes.length - 1] as number
  const sieve = new Sieve(n, kn, fb, p.halfWidth, p)
  const kinds = [0, 0, 0]
  for (let polynomial = 0; polynomial < polynomials; polynomial++) {
    sieve.nextPolynomial()
    for (const r of sieve.collect()) {
      let side = r.neg ? n - 1n : 1n
      for (const i of r.indices) side = (side * BigInt(primes[i] as number)) % n
      for (const l of r.large) {
        assert.ok(l > pMax && refIsProbablePrime(BigInt(l), next), `large prime ${l} of ${n}, seed ${SEED}`)
        side = (side * BigInt(l)) % n
      }
      assert.equal(refModPow(r.y, 2n, n), side, `relation y = ${r.y} of ${n}, seed ${SEED}`)
      kinds[r.large.length] = (kinds[r.large.length] as number) + 1
    }
  }
  return kinds
}

describe("quadratic sieve's sieve", () => {
  test('yields true relations where the kernel trial-divides g(x) alone (26 digits)', () => {
    const params = {
      primes: 150,
      halfWidth: 8192,
      largeFactor: 64,
      doubleExponent: 0,
      thresholdLogs: 1.8,
      smallBound: 30,
    }
    const [full, single] = checkRelations(26, 1, params, 60)
    assert.ok((full as number) > 0 && (single as number) > 0, `${full} full, ${single} partial, seed ${SEED}`)
  })

  test('yields true relations, with two large primes, on BigInt with resieving (54 digits, k = 3)', () => {
    const params = {
      primes: 1500,
      halfWidth: 32768,
      largeFactor: 64,
      doubleExponent: 1.8,
      thresholdLogs: 2.4,
      smallBound: 30,
    }
    const [full, single, double] = checkRelations(54, 3, params, 400)
    assert.ok(
      (full as number) > 0 && (single as number) > 0 && (double as number) > 0,
      `${full} full, ${single} single and ${double} double partial relations, seed ${SEED}`,
    )
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Budget } from '../../../src/algorithms/prime-checker/budget.js'
import { factorize } from '../../../src/algorithms/prime-checker/factorize.js'
import { quadraticSieve } from '../../../src/algorithms/prime-checker/quadratic-sieve.js'
import { prng, randomBits, refIsProbablePrime, testSeed } from '../../helpers/reference-math.js'

const SEED = testSeed('quadratic-sieve.test.ts')
const GENEROUS_MS = 120_000

/** A random prime of `digits` decimal digits, checked by the independent reference test. */
function randomPrime(next: () => number, digits: number): bigint {
  const lo = 10n ** BigInt(digits - 1)
  let p = (lo + (randomBits(next, Math.ceil(digits * 3.33) + 8) % (9n * lo))) | 1n
  while (!refIsProbablePrime(p, next)) p += 2n
  return p
}

/** Checks that quadraticSieve returns a nontrivial divisor of n within a generous budget. */
function assertSplits(n: bigint, context: string): bigint {
  const d = quadraticSieve(n, new Budget(performance.now() + GENEROUS_MS))
  assert.ok(d !== undefined, `no divisor of ${n} (${context}), seed ${SEED}`)
  assert.ok(d > 1n && d < n, `trivial divisor ${d} of ${n} (${context}), seed ${SEED}`)
  assert.equal(n % d, 0n, `${d} does not divide ${n} (${context}), seed ${SEED}`)
  return d
}

describe('quadratic sieve', () => {
  for (const digits of [20, 25, 30, 35, 40]) {
    test(`splits balanced ${digits}-digit semiprimes into their primes`, () => {
      const next = prng(SEED + digits)
      const runs = digits <= 30 ? 3 : 1
      for (let i = 0; i < runs; i++) {
        const p = randomPrime(next, Math.floor(digits / 2))
        const q = randomPrime(next, Math.ceil(digits / 2))
        const d = assertSplits(p * q, `${p} * ${q}`)
        assert.ok(d === p || d === q, `${d} is neither ${p} nor ${q}, seed ${SEED}`)
      }
    })
  }

  test('splits unbalanced semiprimes', () => {
    const next = prng(SEED + 1)
    for (const [small, large] of [
      [6, 19],
      [8, 22],
      [10, 24],
    ]) {
      const p = randomPrime(next, small as number)
      const q = randomPrime(next, large as number)
      const d = assertSplits(p * q, `${p} * ${q}`)
      assert.ok(d === p || d === q, `${d} is neither ${p} nor ${q}, seed ${SEED}`)
    }
  })

  test('splits products of three primes', () => {
    const next = prng(SEED + 2)
    for (const digits of [7, 9, 11]) {
      const primes = [randomPrime(next, digits), randomPrime(next, digits + 1), randomPrime(next, digits + 2)]
      const n = primes.reduce((a, b) => a * b, 1n)
      const d = assertSplits(n, primes.join(' * '))
      const inside = primes.filter((p) => d % p === 0n)
      assert.equal(
        inside.reduce((a, b) => a * b, 1n),
        d,
        `${d} is not a product of ${primes.join(', ')}, seed ${SEED}`,
      )
    }
  })

  test('splits numbers with a square factor, p^2 q', () => {
    const next = prng(SEED + 3)
    for (const [pd, qd] of [
      [7, 8],
      [8, 12],
      [10, 9],
    ]) {
      const p = randomPrime(next, pd as number)
      const q = randomPrime(next, qd as number)
      const d = assertSplits(p * p * q, `${p}^2 * ${q}`)
      assert.ok([p, q, p * p, p * q].includes(d), `${d} is not made of ${p} and ${q}, seed ${SEED}`)
    }
  })

  test('returns undefined quickly at a tiny budget on a 45-digit number', () => {
    const next = prng(SEED + 4)
    const n = randomPrime(next, 22) * randomPrime(next, 23)
    const start = performance.now()
    const d = quadraticSieve(n, new Budget(performance.now() + 5))
    const ms = performance.now() - start
    assert.equal(d, undefined, `a 5 ms budget split ${n} into ${d}, seed ${SEED}`)
    assert.ok(ms < 500, `a 5 ms budget took ${ms.toFixed(0)} ms on ${n}, seed ${SEED}`)
  })

  test('throws the reason of an aborted signal', () => {
    const next = prng(SEED + 5)
    const n = randomPrime(next, 20) * randomPrime(next, 21)
    const controller = new AbortController()
    const reason = new Error('stop')
    controller.abort(reason)
    assert.throws(
      () => quadraticSieve(n, new Budget(performance.now() + GENEROUS_MS, controller.signal)),
      (e) => e === reason,
    )
  })

  test('factorize completes 30-digit semiprimes through it, with independently checked primes', () => {
    const next = prng(SEED + 6)
    for (let i = 0; i < 3; i++) {
      const p = randomPrime(next, 15)
      const q = randomPrime(next, 15)
      const { factors, complete } = factorize(p * q, { deadline: performance.now() + GENEROUS_MS })
      const context = `${p} * ${q} gave ${factors.join(' * ')}, seed ${SEED}`
      assert.ok(complete, context)
      assert.deepEqual(factors, p < q ? [p, q] : [q, p], context)
    }
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Budget } from '../../../src/algorithms/prime-checker/budget.js'
import { ecm } from '../../../src/algorithms/prime-checker/ecm.js'
import { factorize } from '../../../src/algorithms/prime-checker/factorize.js'
import { prng, randomBits, refIsProbablePrime, testSeed } from '../../helpers/reference-math.js'

const SEED = testSeed('ecm.test.ts')
/** The /invoke factorisation budget (decisions.md, The prime result). */
const INVOKE_MS = 2000
const GENEROUS_MS = 60_000

function randomPrime(next: () => number, bits: number): bigint {
  let p = randomBits(next, bits) | (1n << BigInt(bits - 1)) | 1n
  while (!refIsProbablePrime(p, next)) p += 2n
  return p
}

function product(factors: bigint[]): bigint {
  return factors.reduce((a, b) => a * b, 1n)
}

describe('ECM', () => {
  test('finds a factor of 30 to 50 bits in products with a prime of 100 to 400 bits', () => {
    const next = prng(SEED)
    for (let i = 0; i < 6; i++) {
      const p = randomPrime(next, 30 + (next() % 21))
      const q = randomPrime(next, 100 + (next() % 301))
      const d = ecm(p * q, new Budget(performance.now() + GENEROUS_MS))
      assert.ok(d === p || d === q, `ecm(${p} * ${q}) = ${d}, seed ${SEED}`)
    }
  })

  test('gives up at a passed deadline', () => {
    const n = (2n ** 89n - 1n) * (2n ** 107n - 1n)
    assert.equal(ecm(n, new Budget(0)), undefined)
  })
})

describe('factorize above 2^64', () => {
  test('F7 = 2^128 + 1 and F8 = 2^256 + 1 factor completely within the /invoke budget', () => {
    const cases: [bigint, bigint[]][] = [
      [2n ** 128n + 1n, [59649589127497217n, 5704689200685129054721n]],
      [2n ** 256n + 1n, [1238926361552897n, 93461639715357977769163558199606896584051237541638188580280321n]],
    ]
    for (const [n, factors] of cases) {
      assert.deepEqual(factorize(n, { deadline: performance.now() + INVOKE_MS }), { factors, complete: true })
    }
  })

  test('random numbers of 65 to 160 bits factor into independently checked primes', () => {
    const next = prng(SEED + 1)
    for (let i = 0; i < 60; i++) {
      const bits = 65 + (next() % 96)
      const n = randomBits(next, bits) | (1n << BigInt(bits - 1))
      const { factors, complete } = factorize(n, { deadline: performance.now() + GENEROUS_MS })
      const context = `n = ${n}, factors = ${factors.join(' * ')}, seed ${SEED}`
      // Random numbers this size rarely have two factors above 10^15; the budget covers those that do.
      assert.ok(complete, context)
      assert.equal(product(factors), n, context)
      assert.ok(
        factors.every((f, j) => j === 0 || (factors[j - 1] as bigint) <= f),
        context,
      )
      for (const f of factors) assert.ok(refIsProbablePrime(f, next), `${f} is not prime: ${context}`)
    }
  })

  test('three medium primes times a large one come apart', () => {
    const next = prng(SEED + 2)
    const primes = [
      randomPrime(next, 28),
      randomPrime(next, 36),
      randomPrime(next, 44),
      randomPrime(next, 300),
    ]
    const sorted = [...primes].sort((a, b) => (a < b ? -1 : 1))
    const result = factorize(product(primes), { deadline: performance.now() + GENEROUS_MS })
    assert.deepEqual(result, { factors: sorted, complete: true }, `seed ${SEED}`)
  })
})

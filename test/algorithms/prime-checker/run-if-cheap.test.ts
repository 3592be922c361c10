// The 64-bit fast path (docs/prime-checker.md, "Budgets and where it runs"): what is provably cheap below
// 2^64 is answered on the event loop with exactly the result of a full run; what needs rho is left to a
// worker thread.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { INLINE } from '../../../src/algorithms/algorithm.js'
import { primeChecker } from '../../../src/algorithms/prime-checker/index.js'

const run = (number: bigint) => primeChecker.run({ number }, { budgetMs: 5000 })
const cheap = (number: bigint) => primeChecker[INLINE].runIfCheap({ number })

const P64 = 2n ** 64n - 59n // the largest prime below 2^64
const P32 = 4294967291n // the largest prime below 2^32

test('primes, and composites trial division finishes, get the full run result inline', () => {
  const numbers = [
    P64,
    -P64,
    2n ** 63n,
    2n ** 64n - 1n, // 3 * 5 * 17 * 257 * 641 * 65537 * 6700417
    -(2n ** 64n - 1n),
    2n ** 32n,
    65521n * P32, // one factor below 2^16: the cofactor is prime
    65537n * 65537n * 3n,
    -15n * P32,
    7n ** 22n,
    1000000007n * 998244353n * 3n,
    18446744073709551557n,
  ]
  for (const n of numbers) {
    const quick = cheap(n)
    if (quick === undefined) continue
    assert.deepEqual(quick, run(n), String(n))
  }
  for (const n of [P64, -P64, 2n ** 63n, 65521n * P32, -15n * P32, 7n ** 22n]) {
    assert.deepEqual(cheap(n), run(n), `${n} is answered inline`)
  }
})

test('a composite whose factors all exceed 2^16 is left to the pool', () => {
  // 2^64 - 1 = 3 * 5 * 17 * 257 * 641 * 65537 * 6700417: 65537 * 6700417 is left.
  for (const n of [
    4294967279n * P32,
    65537n * 65539n,
    65537n * 65537n,
    1000000007n * 998244353n,
    2n ** 64n - 1n,
  ]) {
    assert.equal(cheap(n), undefined, String(n))
  }
})

test('numbers from 2^64 on are left to the pool', () => {
  assert.equal(cheap(2n ** 64n + 13n), undefined)
  assert.equal(cheap(-(2n ** 64n)), undefined)
})

// primeChecker.run with a budget in ms: the call POST /invoke's worker thread makes
// (src/execution/pool-worker.ts) with ALGOSERVE_INVOKE_FACTOR_BUDGET_MS. Every balanced 50-digit semiprime
// is meant to be factored completely within the 2 s of /invoke; whether that holds in time is
// bench/prime/invoke-50.ts's question (docs/benchmarks/prime-checker.md): a test that asserted it would be a
// timing assertion on a shared machine. Here the budget is generous and the answer is what is checked:
// complete, multiplying back, every factor prime by the independent reference test.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { primeChecker } from '../../../src/algorithms/prime-checker/index.js'
import {
  prng,
  randomPrimeOfDigits as randomPrime,
  refIsProbablePrime,
  testSeed,
} from '../../helpers/reference-math.js'

const SEED = testSeed('index.test.ts')
const GENEROUS_MS = 120_000

test('balanced 50-digit semiprimes factor completely through run(), the path of /invoke', () => {
  const next = prng(SEED)
  for (let i = 0; i < 3; i++) {
    const p = randomPrime(next, 25)
    const q = randomPrime(next, 25)
    const number = p * q
    const result = primeChecker.run({ number }, { budgetMs: GENEROUS_MS })
    const context = `${number} = ${p} * ${q}, got ${result.factors.join(' * ')}, seed ${SEED}`
    assert.equal(result.is_prime, false, context)
    assert.equal(result.factorization_complete, true, context)
    assert.deepEqual(result.factors, p < q ? [p, q] : [q, p], context)
    assert.equal(
      result.factors.reduce((a, b) => a * b, 1n),
      number,
      context,
    )
    for (const f of result.factors) assert.ok(refIsProbablePrime(f, next), `${f} is not prime: ${context}`)
  }
})

test('a budget too short for a 50-digit semiprime gives it back whole, marked incomplete', () => {
  const next = prng(SEED + 1)
  const number = randomPrime(next, 25) * randomPrime(next, 25)
  // 20 ms: rho's 2000 steps and part of ECM's share; the sieve needs hundreds of ms at 50 digits.
  const result = primeChecker.run({ number }, { budgetMs: 20 })
  assert.deepEqual(
    { factors: result.factors, complete: result.factorization_complete },
    { factors: [number], complete: false },
    `seed ${SEED}`,
  )
})

// Timings on the 2-core development machine (Node 20, other jobs running), generous deadline: every
// factorisation vector together takes about 60 ms with the kernel's rho and ECM (1.6 s for the slowest alone
// with BigInt rho before). RSA-100, RSA-129 and both Arnault numbers stop at the 300 ms deadline; F7 and F8
// now factor completely (ecm.test.ts).
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type Factorization, factorize } from '../../../src/algorithms/prime-checker/factorize.js'
import { isBailliePSW } from '../../../src/algorithms/prime-checker/primality.js'
import { RSA_100 } from '../../helpers/numbers.js'
import { prng, randomBits, refIsProbablePrime, testSeed } from '../../helpers/reference-math.js'

// Correctness vectors, written out here: edge cases, strong pseudoprimes, Carmichael numbers and known
// factorisations, and Arnault's composites built to pass Miller-Rabin to many bases.

/** [n, its prime factors ascending]. */
const FACTORISATIONS: [bigint, bigint[]][] = [
  [2n, [2n]],
  [3n, [3n]],
  [4n, [2n, 2n]],
  [2n ** 64n - 1n, [3n, 5n, 17n, 257n, 641n, 65537n, 6700417n]],
  [2n ** 64n + 1n, [274177n, 67280421310721n]],
  [2n ** 64n, Array<bigint>(64).fill(2n)],
  [18446744030759878681n, [4294967291n, 4294967291n]],
  [2n ** 67n - 1n, [193707721n, 761838257287n]],
  // Strong pseudoprimes.
  [2047n, [23n, 89n]],
  [1373653n, [829n, 1657n]],
  [25326001n, [2251n, 11251n]],
  [3215031751n, [151n, 751n, 28351n]],
  [2152302898747n, [6763n, 10627n, 29947n]],
  [3474749660383n, [1303n, 16927n, 157543n]],
  [341550071728321n, [10670053n, 32010157n]],
  [3825123056546413051n, [149491n, 747451n, 34233211n]],
  [318665857834031151167461n, [399165290221n, 798330580441n]],
  [3317044064679887385961981n, [1287836182261n, 2575672364521n]],
  [564132928021909221014087501701n, [531099297693901n, 1062198595387801n]],
  [9188353522314541n, [67780357n, 135560713n]],
  // Carmichael numbers (factors checked with PARI/GP factor()).
  [561n, [3n, 11n, 17n]],
  [1105n, [5n, 13n, 17n]],
  [1729n, [7n, 13n, 19n]],
  [2465n, [5n, 17n, 29n]],
  [2821n, [7n, 13n, 31n]],
  [6601n, [7n, 23n, 41n]],
  [8911n, [7n, 19n, 67n]],
  [41041n, [7n, 11n, 13n, 41n]],
  [62745n, [3n, 5n, 47n, 89n]],
  [825265n, [5n, 7n, 17n, 19n, 73n]],
  [321197185n, [5n, 19n, 23n, 29n, 37n, 137n]],
  [5394826801n, [7n, 13n, 17n, 23n, 31n, 67n, 73n]],
  [232250619601n, [7n, 11n, 13n, 17n, 31n, 37n, 73n, 163n]],
  [9746347772161n, [7n, 11n, 13n, 17n, 19n, 31n, 37n, 41n, 641n]],
]

const ARNAULT_P1 =
  29674495668685510550154174642905332730771991799853043350995075531276838753171770199594238596428121188033664754218345562493168782883n

/** Numbers whose smallest prime factor is far beyond what rho and ECM find in a short deadline. */
const HARD: [string, bigint][] = [
  ['RSA-100', BigInt(RSA_100)],
  [
    'RSA-129',
    114381625757888867669235779976146612010218296721242362562561842935706935245733897830597123563958705058989075147599290026879543541n,
  ],
  ['Arnault 1995', ARNAULT_P1 * (313n * (ARNAULT_P1 - 1n) + 1n) * (353n * (ARNAULT_P1 - 1n) + 1n)],
  [
    'Arnault 1993',
    BigInt(
      '8038374574536394912570796143419421081388376882875581458374889175222974273765333652186502336163960045457915042023603208766569966760987284043965408232928738791850869166857328267761771029389697739470167082304286871099974399765441448453411558724506334092790222752962294149842306881685404326457534018329786111298960644845216191652872597534901',
    ),
  ],
]

const GENEROUS_MS = 60_000
const SHORT_MS = 300

function product(factors: bigint[]): bigint {
  return factors.reduce((a, b) => a * b, 1n)
}

function isAscending(values: bigint[]): boolean {
  return values.every((v, i) => i === 0 || (values[i - 1] as bigint) <= v)
}

/** Checks the shape of an incomplete result: product n, primes ascending, then composites ascending. */
function assertPartial(n: bigint, result: Factorization, label: string): void {
  assert.equal(result.complete, false, `${label}: complete`)
  assert.equal(product(result.factors), n, `${label}: product`)
  const firstComposite = result.factors.findIndex((f) => !isBailliePSW(f))
  assert.ok(firstComposite >= 0, `${label}: some part is composite`)
  const primes = result.factors.slice(0, firstComposite)
  const composites = result.factors.slice(firstComposite)
  assert.ok(
    composites.every((f) => !isBailliePSW(f)),
    `${label}: composites come last`,
  )
  assert.ok(isAscending(primes) && isAscending(composites), `${label}: ascending within each group`)
}

const SEED = testSeed('factorize.test.ts')

/** factorize(n) completes, ascending, with a product of n and every factor prime by the independent test. */
function assertCompleteFactorization(n: bigint, next: () => number): void {
  const { factors, complete } = factorize(n, { deadline: performance.now() + GENEROUS_MS })
  const context = `n = ${n}, factors = ${factors.join(' * ')}, seed ${SEED}`
  assert.ok(complete, context)
  assert.equal(product(factors), n, context)
  assert.ok(isAscending(factors), context)
  for (const f of factors) assert.ok(refIsProbablePrime(f, next), `${f} is not prime: ${context}`)
}

describe('factorize on the vectors', () => {
  test('gives exactly the listed primes', () => {
    for (const [n, expected] of FACTORISATIONS) {
      const result = factorize(n, { deadline: performance.now() + GENEROUS_MS })
      assert.deepEqual(result, { factors: expected, complete: true }, `factorize(${n})`)
    }
  })

  test('a prime returns itself', () => {
    for (const p of [4294967291n, 18446744073709551557n, 2n ** 89n - 1n, ARNAULT_P1]) {
      assert.deepEqual(factorize(p, { deadline: performance.now() + GENEROUS_MS }), {
        factors: [p],
        complete: true,
      })
    }
  })

  test('hard numbers stop at a short deadline with a consistent partial result', () => {
    for (const [label, n] of HARD) {
      const start = performance.now()
      const result = factorize(n, { deadline: start + SHORT_MS })
      const elapsed = performance.now() - start
      assertPartial(n, result, label)
      // Slack covers one batch plus the primality tests of the parts, which the deadline does not cut short.
      assert.ok(elapsed < SHORT_MS + 500, `${label}: took ${elapsed.toFixed(0)} ms`)
    }
  })

  test('a passed deadline still settles primality and trial division', () => {
    // 2^32 (2^32 - 5) needs no rho: trial division leaves the prime 2^32 - 5.
    assert.deepEqual(factorize(2n ** 32n * 4294967291n, { deadline: 0 }), {
      factors: [...Array<bigint>(32).fill(2n), 4294967291n],
      complete: true,
    })
    // 2^64 + 1 needs rho, so it stays whole; 3^2 is divided out first.
    const n = 9n * (2n ** 64n + 1n)
    assert.deepEqual(factorize(n, { deadline: 0 }), { factors: [3n, 3n, 2n ** 64n + 1n], complete: false })
  })
})

describe('factorize on random numbers', () => {
  test('a few hundred random n of 2 to 100 bits factor completely into independently checked primes', () => {
    const next = prng(SEED)
    for (let i = 0; i < 250; i++) {
      const bits = 2 + (next() % 99)
      const n = randomBits(next, bits) | (1n << BigInt(bits - 1))
      assertCompleteFactorization(n, next)
    }
  })

  test('below 2^32, where trial division runs in the kernel past 2^16, every shape factors exactly', () => {
    const next = prng(SEED + 1)
    const shapes = [
      4294967291n, // the largest prime below 2^32
      65521n * 65521n, // the square of the largest prime below 2^16
      65519n * 65521n,
      65537n * 65521n, // one factor just past 2^16
      2n ** 31n * 3n - 1n,
      2n ** 16n + 1n,
      2n ** 16n,
      3n ** 20n,
      2n ** 5n * 65537n * 131n,
    ]
    for (let i = 0; i < 300; i++) shapes.push(BigInt(next()))
    for (const n of shapes) {
      if (n < 2n) continue
      assertCompleteFactorization(n, next)
    }
  })

  test('perfect powers of primes far too large for rho are found by roots', () => {
    const m61 = 2n ** 61n - 1n
    const m89 = 2n ** 89n - 1n
    const q = 1000000007n
    const cases: [bigint, bigint[]][] = [
      [m61 ** 2n, [m61, m61]],
      [m61 ** 3n * 2n, [2n, m61, m61, m61]],
      [m89 ** 5n, Array<bigint>(5).fill(m89)],
      // The square root m61 * q is composite and is then split by rho.
      [(m61 * q) ** 2n, [q, q, m61, m61]],
      // 65537^13 has 209 bits: the largest exponent that the bitLength / 16 bound allows.
      [65537n ** 13n, Array<bigint>(13).fill(65537n)],
    ]
    for (const [n, expected] of cases) {
      const result = factorize(n, { deadline: performance.now() + SHORT_MS })
      assert.deepEqual(result, { factors: expected, complete: true }, `factorize(${n})`)
    }
  })
})

describe('past the 32-bit kernel of rho and ECM', () => {
  /** The first odd n >= start with no divisor below 2^16, found by dividing by every odd number. */
  function noSmallDivisor(start: bigint): bigint {
    for (let n = start | 1n; ; n += 2n) {
      let found = false
      for (let d = 3n; d < 65536n && !found; d += 2n) found = n % d === 0n
      if (!found) return n
    }
  }

  test('a composite above 1024 32-bit limbs is left unsplit instead of throwing', () => {
    // 32,802 bits, past montn's 32,768. primeChecker.run passes composite: true after its own isPrime (about
    // 20 s at this size), so this is the call it makes, without that test.
    const n = noSmallDivisor(2n ** 16400n) * noSmallDivisor(2n ** 16401n + 2n ** 8000n)
    const result = factorize(n, { deadline: performance.now() + 1000, composite: true })
    assert.deepEqual(
      result,
      { factors: [n], complete: false },
      'the part is left whole and marked incomplete',
    )
  })
})

describe('abort', () => {
  test('an already aborted signal throws its reason', () => {
    const controller = new AbortController()
    const reason = new Error('cancelled')
    controller.abort(reason)
    const n = HARD[0]?.[1] as bigint
    assert.throws(
      () => factorize(n, { deadline: performance.now() + GENEROUS_MS, signal: controller.signal }),
      (error) => error === reason,
    )
  })

  test('a signal aborted while rho or ECM runs stops factorize promptly', () => {
    // factorize is synchronous, so a timer could never fire inside it: this signal turns aborted by itself.
    const abortAt = performance.now() + 100
    const reason = new Error('cancelled mid-run')
    const signal = {
      get aborted() {
        return performance.now() >= abortAt
      },
      reason,
    } as AbortSignal
    const n = HARD[0]?.[1] as bigint
    assert.throws(
      () => factorize(n, { deadline: performance.now() + GENEROUS_MS, signal }),
      (error) => error === reason,
    )
    const late = performance.now() - abortAt
    assert.ok(late < 200, `stopped ${late.toFixed(0)} ms after the abort`)
  })
})

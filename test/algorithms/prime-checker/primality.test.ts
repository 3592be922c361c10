import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  bitLength,
  gcd,
  iroot,
  isqrt,
  jacobi,
  modPow,
} from '../../../src/algorithms/prime-checker/bigint-math.js'
import {
  isBailliePSW,
  isPrime,
  isStrongLucasProbablePrime,
  isStrongProbablePrime,
  primalityMethod,
} from '../../../src/algorithms/prime-checker/primality.js'
import { SMALL_PRIME_LIMIT, SMALL_PRIMES } from '../../../src/algorithms/prime-checker/small-primes.js'
import {
  prng,
  randomBits,
  refIsProbablePrime,
  refModPow,
  sieve,
  testSeed,
} from '../../helpers/reference-math.js'

// Correctness vectors, written out here: edge cases and sign conventions, strong pseudoprimes to small fixed
// bases, strong Lucas pseudoprimes, Carmichael numbers, known primes, and Arnault's composites built to pass
// Miller-Rabin to many bases (1993 and 1995).

const ARNAULT_P1 =
  29674495668685510550154174642905332730771991799853043350995075531276838753171770199594238596428121188033664754218345562493168782883n
// Arnault 1995: p1 * (313(p1 - 1) + 1) * (353(p1 - 1) + 1), 397 digits.
const ARNAULT_95 = ARNAULT_P1 * (313n * (ARNAULT_P1 - 1n) + 1n) * (353n * (ARNAULT_P1 - 1n) + 1n)
const ARNAULT_95_DIGITS =
  '2887148238050771212671429597130393991977609459279722700926516024197432303799152733116328983144639225941977803110929349655578418949441740933805615113979999421542416933972905423711002751042080134966731755152859226962916775325475044445856101949404200039904432116776619949629539250452698719329070373564032273701278453899126120309244841494728976885406024976768122077071687938121709811322297802059565867'
const ARNAULT_93 = BigInt(
  '8038374574536394912570796143419421081388376882875581458374889175222974273765333652186502336163960045457915042023603208766569966760987284043965408232928738791850869166857328267761771029389697739470167082304286871099974399765441448453411558724506334092790222752962294149842306881685404326457534018329786111298960644845216191652872597534901',
)
const ARNAULT_93_FACTOR = BigInt(
  '4009582166394996054183064520845468530051881660411325087745062047380032170701196242716223191597219733582163165085358166969145233813917169287527980445796800452592031836601',
)

/** [n, is_prime] rows of section 1 (edge cases and boundaries). */
const EDGE_CASES: [bigint, boolean][] = [
  [0n, false],
  [1n, false],
  [-1n, false],
  [2n, true],
  [3n, true],
  [4n, false],
  [-7n, false],
  [18446744073709551557n, true], // 2^64 - 59
  [18446744073709551629n, true], // 2^64 + 13
  [9223372036854775783n, true], // 2^63 - 25
  [4294967291n, true], // 2^32 - 5
  [4294967311n, true], // 2^32 + 15
  [18446744030759878681n, false], // (2^32 - 5)^2
  [18446744073709551615n, false], // 2^64 - 1
  [18446744073709551617n, false], // 2^64 + 1
  [18446744073709551616n, false], // 2^64
]

/** Section 2: n and how many consecutive prime bases 2, 3, 5, ... it is a strong pseudoprime to. */
const STRONG_PSEUDOPRIMES: [bigint, number][] = [
  [2047n, 1],
  [1373653n, 2],
  [25326001n, 3],
  [3215031751n, 4],
  [2152302898747n, 5],
  [3474749660383n, 6],
  [341550071728321n, 8],
  [3825123056546413051n, 11],
  [318665857834031151167461n, 12],
  [3317044064679887385961981n, 13],
  [564132928021909221014087501701n, 17],
  [ARNAULT_95, 62],
  [ARNAULT_93, 46],
]

/** Section 3 (OEIS A217255). */
const STRONG_LUCAS_PSEUDOPRIMES = [
  5459n,
  5777n,
  10877n,
  16109n,
  18971n,
  22499n,
  24569n,
  25199n,
  40309n,
  58519n,
]

/** Section 4 (OEIS A002997). */
const CARMICHAEL = [
  561n,
  1105n,
  1729n,
  2465n,
  2821n,
  6601n,
  8911n,
  41041n,
  62745n,
  825265n,
  321197185n,
  5394826801n,
  232250619601n,
  9746347772161n,
]

/** Section 5. */
const KNOWN_PRIMES: [string, bigint][] = [
  ['2^61-1', 2n ** 61n - 1n],
  ['2^89-1', 2n ** 89n - 1n],
  ['2^127-1', 2n ** 127n - 1n],
  ['2^521-1', 2n ** 521n - 1n],
  ['2^607-1', 2n ** 607n - 1n],
  ['10^100+267', 10n ** 100n + 267n],
  ['Arnault p1', ARNAULT_P1],
]

function firstPrimes(count: number): bigint[] {
  return Array.from(SMALL_PRIMES.subarray(0, count), BigInt)
}

const SEED = testSeed('primality.test.ts')

describe('bigint-math', () => {
  test('gcd and modPow', () => {
    assert.equal(gcd(0n, 0n), 0n)
    assert.equal(gcd(-12n, 18n), 6n)
    assert.equal(gcd(17n, 0n), 17n)
    assert.equal(modPow(2n, 10n, 1000n), 24n)
    assert.equal(modPow(-2n, 3n, 7n), 6n)
    assert.equal(modPow(5n, 0n, 1n), 0n)
    assert.equal(modPow(5n, 0n, 7n), 1n)
  })

  test('bitLength', () => {
    assert.equal(bitLength(0n), 0)
    assert.equal(bitLength(1n), 1)
    assert.equal(bitLength(-8n), 4)
    for (let k = 1n; k < 300n; k++) {
      assert.equal(bitLength(2n ** k - 1n), Number(k))
      assert.equal(bitLength(2n ** k), Number(k) + 1)
    }
  })

  test('isqrt and iroot are exact floors around perfect powers', () => {
    for (const k of [2, 3, 5, 7, 13, 64]) {
      for (const r of [1n, 2n, 3n, 65537n, 4294967291n, 10n ** 40n + 7n]) {
        const n = r ** BigInt(k)
        assert.equal(iroot(n, k), r, `iroot(${r}^${k}, ${k})`)
        assert.equal(iroot(n - 1n, k), r - 1n, `iroot(${r}^${k} - 1, ${k})`)
        assert.equal(iroot(n + 1n, k), r, `iroot(${r}^${k} + 1, ${k})`)
      }
    }
    for (let n = 0n; n < 2000n; n++) {
      const r = isqrt(n)
      assert.ok(r * r <= n && (r + 1n) * (r + 1n) > n, `isqrt(${n}) = ${r}`)
    }
    assert.equal(isqrt(18446744030759878681n), 4294967291n)
    assert.equal(iroot(2n ** 4253n, 4253), 2n)
    assert.equal(iroot(2n ** 4253n - 1n, 4253), 1n)
  })

  test('jacobi matches Euler\u2019s criterion for odd primes and multiplies over factors', () => {
    const primes = [3n, 5n, 7n, 11n, 13n, 101n, 65537n]
    for (const p of primes) {
      for (let a = -30n; a < 60n; a++) {
        const euler = refModPow(((a % p) + p) % p, (p - 1n) / 2n, p)
        const expected = euler === 0n ? 0 : euler === 1n ? 1 : -1
        assert.equal(jacobi(a, p), expected, `(${a}/${p})`)
      }
    }
    for (let a = -20n; a < 20n; a++) {
      // === rather than assert.equal, which tells the product's -0 from 0.
      assert.ok(jacobi(a, 15n) === jacobi(a, 3n) * jacobi(a, 5n), `(${a}/15)`)
    }
    assert.throws(() => jacobi(3n, 8n), RangeError)
  })
})

describe('small primes', () => {
  test('SMALL_PRIMES is exactly the primes below SMALL_PRIME_LIMIT', () => {
    const reference = sieve(SMALL_PRIME_LIMIT)
    const expected: number[] = []
    for (let i = 0; i < SMALL_PRIME_LIMIT; i++) if (reference[i]) expected.push(i)
    assert.equal(SMALL_PRIMES.length, 6542)
    assert.deepEqual(Array.from(SMALL_PRIMES), expected)
  })
})

describe('isPrime on the vectors', () => {
  test('edge cases and boundaries', () => {
    for (const [n, expected] of EDGE_CASES) assert.equal(isPrime(n), expected, `isPrime(${n})`)
  })

  test('strong pseudoprimes are composite although they pass the listed bases', () => {
    assert.equal(ARNAULT_95.toString(), ARNAULT_95_DIGITS)
    assert.equal(ARNAULT_93 % ARNAULT_93_FACTOR, 0n)
    for (const [n, bases] of STRONG_PSEUDOPRIMES) {
      for (const base of firstPrimes(bases)) assert.ok(isStrongProbablePrime(n, base), `${n} base ${base}`)
      assert.equal(isPrime(n), false, `isPrime(${n})`)
      assert.equal(isBailliePSW(n), false, `isBailliePSW(${n})`)
    }
    // Passes the base set {2, 3, 7, 61, 24251} (sympy test suite).
    const n = 9188353522314541n
    for (const base of [2n, 3n, 7n, 61n, 24251n]) assert.ok(isStrongProbablePrime(n, base), `base ${base}`)
    assert.equal(isPrime(n), false)
  })

  test('Arnault 1995 fools Miller-Rabin with every prime base below 307 but not Baillie-PSW', () => {
    const bases = firstPrimes(62)
    assert.equal(bases.at(-1), 293n)
    assert.ok(bases.every((base) => isStrongProbablePrime(ARNAULT_95, base)))
    assert.equal(isStrongProbablePrime(ARNAULT_95, 307n), false)
    assert.equal(isStrongLucasProbablePrime(ARNAULT_95), false)
  })

  test('strong Lucas pseudoprimes pass the Lucas test but fail base 2 and Baillie-PSW', () => {
    for (const n of STRONG_LUCAS_PSEUDOPRIMES) {
      assert.ok(isStrongLucasProbablePrime(n), `isStrongLucasProbablePrime(${n})`)
      assert.equal(isStrongProbablePrime(n, 2n), false, `base 2 on ${n}`)
      assert.equal(isBailliePSW(n), false, `isBailliePSW(${n})`)
      assert.equal(isPrime(n), false, `isPrime(${n})`)
    }
  })

  test('Carmichael numbers are composite', () => {
    for (const n of CARMICHAEL) {
      // Fermat's test with a coprime base (all are odd, so 2 is one) cannot tell them from primes.
      assert.equal(refModPow(2n, n - 1n, n), 1n, `Fermat base 2 on ${n}`)
      // The strong test sees a square root of 1 other than -1 (checked with PARI/GP for all of these).
      assert.equal(isStrongProbablePrime(n, 2n), false, `base 2 on ${n}`)
      assert.equal(isPrime(n), false, `isPrime(${n})`)
      assert.equal(isBailliePSW(n), false, `isBailliePSW(${n})`)
    }
  })

  test('known primes, and the composite Mersenne number 2^601 - 1', () => {
    for (const [name, p] of KNOWN_PRIMES) assert.ok(isPrime(p), name)
    assert.equal(isPrime(2n ** 601n - 1n), false)
    // Squares of the Wieferich primes 1093 and 3511 are strong pseudoprimes to base 2; 3511 is above
    // Baillie-PSW's trial division, so the square check (or the Lucas test) must reject its square.
    for (const p of [1093n, 3511n]) {
      assert.ok(isStrongProbablePrime(p * p, 2n), `base 2 on ${p}^2`)
      assert.equal(isPrime(p * p), false, `isPrime(${p}^2)`)
      assert.equal(isBailliePSW(p * p), false, `isBailliePSW(${p}^2)`)
    }
  })
})

describe('primalityMethod', () => {
  test('switches at 2^32 and 2^64 on |n|', () => {
    const cases: [bigint, string][] = [
      [0n, 'trial_division'],
      [2n ** 32n - 1n, 'trial_division'],
      [2n ** 32n, 'deterministic_miller_rabin'],
      [2n ** 64n - 1n, 'deterministic_miller_rabin'],
      [2n ** 64n, 'baillie_psw'],
      [-(2n ** 32n - 1n), 'trial_division'],
      [-(2n ** 32n), 'deterministic_miller_rabin'],
      [-(2n ** 64n - 1n), 'deterministic_miller_rabin'],
      [-(2n ** 64n), 'baillie_psw'],
    ]
    for (const [n, method] of cases) assert.equal(primalityMethod(n), method, `primalityMethod(${n})`)
  })
})

describe('exhaustive agreement with a sieve', () => {
  const reference = sieve(1_000_000)

  test('isPrime for every n below 10^6', () => {
    for (let n = 0; n < reference.length; n++) {
      if (isPrime(BigInt(n)) !== (reference[n] === 1)) assert.fail(`isPrime(${n})`)
    }
  })

  test('isBailliePSW for every n below 10^5', () => {
    for (let n = 0; n < 100_000; n++) {
      if (isBailliePSW(BigInt(n)) !== (reference[n] === 1)) assert.fail(`isBailliePSW(${n})`)
    }
  })

  // isBailliePSW's trial division settles every composite below 10^5, so check the probable-prime tests
  // alone.
  test('base-2 strong test plus strong Lucas test on odd non-squares below 10^5, without trial division', () => {
    for (let n = 3; n < 100_000; n += 2) {
      if (Number.isInteger(Math.sqrt(n))) continue
      const big = BigInt(n)
      const bpsw = isStrongProbablePrime(big, 2n) && isStrongLucasProbablePrime(big)
      if (bpsw !== (reference[n] === 1)) assert.fail(`BPSW core on ${n}`)
    }
  })
})

describe('deterministic Miller-Rabin on random 64-bit numbers', () => {
  const next = prng(SEED)

  /** A random prime of exactly 32 bits, found by stepping from a random odd start. */
  function randomPrime32(): bigint {
    let p = randomBits(next, 32) | (1n << 31n) | 1n
    while (!refIsProbablePrime(p, next)) p = p + 2n >= 2n ** 32n ? (1n << 31n) + 1n : p + 2n
    return p
  }

  test('products of two random 32-bit primes are composite', () => {
    for (let i = 0; i < 300; i++) {
      const p = randomPrime32()
      const q = randomPrime32()
      assert.ok(isPrime(p), `isPrime(${p}), seed ${SEED}`)
      assert.equal(isPrime(p * q), false, `isPrime(${p} * ${q}), seed ${SEED}`)
    }
  })

  test('random odd 64-bit numbers agree with trial division plus 20 random Miller-Rabin bases', () => {
    let primes = 0
    for (let i = 0; i < 3000; i++) {
      const n = randomBits(next, 64) | (1n << 63n) | 1n
      const expected = refIsProbablePrime(n, next)
      assert.equal(isPrime(n), expected, `isPrime(${n}), seed ${SEED}`)
      if (expected) primes++
    }
    // About one odd 64-bit number in 22 is prime, so both outcomes must have been exercised.
    assert.ok(primes > 50, `only ${primes} primes drawn, seed ${SEED}`)
  })
})

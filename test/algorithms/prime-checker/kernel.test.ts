import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, test } from 'node:test'
import { isBailliePSWCore, isBailliePSWKernel } from '../../../src/algorithms/prime-checker/bpsw.js'
import * as kernelModule from '../../../src/algorithms/prime-checker/kernel.js'
import {
  kernel,
  readLimbs28,
  readSlot,
  setModulus,
  setModulus28,
  writeLimbs28,
  writeSlot,
} from '../../../src/algorithms/prime-checker/kernel.js'
import {
  isBailliePSW,
  isBailliePSWBigInt,
  isPrime,
  isStrongProbablePrime,
} from '../../../src/algorithms/prime-checker/primality.js'
import { trialDivide } from '../../../src/algorithms/prime-checker/trial-division.js'
import { prng, randomBits, refIsProbablePrime, sieve, testSeed } from '../../helpers/reference-math.js'

const SEED = testSeed('kernel.test.ts')

const SMALL_ODD_PRIMES = [3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47]

/** The BigInt path's answer for 2^32 <= n < 2^64: a factor below 50 on doubles, else its Baillie-PSW. */
function bigIntIsPrime(n: bigint): boolean {
  if ((n & 1n) === 0n) return false
  const hi = Number(n >> 32n)
  const lo = Number(n & 0xffffffffn)
  for (const p of SMALL_ODD_PRIMES) if (((((hi % p) * 2 ** 32) % p) + (lo % p)) % p === 0) return false
  return isBailliePSWBigInt(n)
}

describe('layout constants', () => {
  test('kernel.ts exports every global of the built kernel with its value, so TypeScript copies none', () => {
    const { WebAssembly } = globalThis as unknown as {
      WebAssembly: {
        Module: { new (bytes: Buffer): object; exports(module: object): { name: string; kind: string }[] }
      }
    }
    const bytes = readFileSync(new URL('../../../wasm/build/prime.wasm', import.meta.url))
    const globals = WebAssembly.Module.exports(new WebAssembly.Module(bytes)).filter(
      (e) => e.kind === 'global',
    )
    assert.ok(globals.length >= 30, `${globals.length} globals`)
    const read = kernelModule as unknown as Record<string, unknown>
    const exported = kernel as unknown as Record<string, { value: number }>
    for (const { name } of globals) assert.equal(read[name], exported[name]?.value, name)
  })
})

describe('64-bit kernel', () => {
  test('agrees with a sieve for every n below 10^7', () => {
    const reference = sieve(10_000_000)
    for (let n = 0; n < reference.length; n++) {
      if ((kernel.isPrime64(BigInt(n)) === 1) !== (reference[n] === 1)) assert.fail(`kernel isPrime64(${n})`)
    }
  })

  test('isPrime agrees with a sieve for every n below 10^7', () => {
    const reference = sieve(10_000_000)
    for (let n = 0; n < reference.length; n++) {
      if (isPrime(BigInt(n)) !== (reference[n] === 1)) assert.fail(`isPrime(${n})`)
    }
  })

  test('agrees with the BigInt path on a million random inputs of 33 to 64 bits', () => {
    const next = prng(SEED)
    let primes = 0
    for (let i = 0; i < 1_000_000; i++) {
      const bits = 33 + (next() % 32)
      const n = randomBits(next, bits) | (1n << BigInt(bits - 1)) | 1n
      const expected = bigIntIsPrime(n)
      if ((kernel.isPrime64(n) === 1) !== expected)
        assert.fail(`isPrime64(${n}) should be ${expected}, seed ${SEED}`)
      if (expected) primes++
    }
    // About 1 odd number in 20 of these sizes is prime: both answers were exercised.
    assert.ok(primes > 20_000, `${primes} primes, seed ${SEED}`)
  })

  test('products of two primes, squares of primes and strong pseudoprimes are composite', () => {
    const next = prng(SEED + 1)
    const prime32 = (): bigint => {
      let p = randomBits(next, 32) | (1n << 31n) | 1n
      while (!refIsProbablePrime(p, next)) p += 2n
      return p
    }
    for (let i = 0; i < 2000; i++) {
      const p = prime32()
      const q = prime32()
      assert.equal(kernel.isPrime64(p), 1, `${p}`)
      assert.equal(kernel.isPrime64(p * q), 0, `${p} * ${q}`)
      assert.equal(kernel.isPrime64(p * p), 0, `${p}^2`)
    }
    for (const n of [
      2047n,
      1373653n,
      25326001n,
      3215031751n,
      2152302898747n,
      3474749660383n,
      341550071728321n,
    ]) {
      assert.ok(isStrongProbablePrime(n, 2n))
      assert.equal(kernel.isPrime64(n), 0, `${n}`)
    }
    assert.equal(kernel.isPrime64(3825123056546413051n), 0)
    assert.equal(kernel.isPrime64(18446744073709551557n), 1)
    assert.equal(kernel.isPrime64(18446744073709551615n), 0)
  })

  test('rho64 returns a proper divisor of semiprimes', () => {
    const next = prng(SEED + 2)
    for (let i = 0; i < 50; i++) {
      // randomPrime may step past its bits (255 to 257), and the product past 2^64: drawn again.
      let p = 0n
      let q = 0n
      while (p * q === 0n || p * q >= 1n << 64n) {
        const bits = 8 + (next() % 24)
        p = randomPrime(next, bits)
        q = randomPrime(next, 64 - bits)
      }
      const n = p * q
      let d = 0n
      for (let c = 1n; d === 0n || d === n; c++) d = kernel.rho64(n, c, 1 << 24)
      assert.equal(n % d, 0n, `${d} divides ${n}`)
      assert.ok(d === p || d === q, `${d} of ${p} * ${q}`)
    }
  })

  test('pminus1_64 finds p exactly when p - 1 is B1-smooth but for one prime up to B2', () => {
    const next = prng(SEED + 3)
    const B1 = 4000
    const B2 = 65535
    const smallPrimes = [3n, 5n, 7n, 11n, 13n, 101n, 997n, 3989n]
    /**
     * A prime p < 2^32 with p - 1 = 2 * (distinct primes up to B1) * last, last a prime in [lastLo, lastHi).
     */
    const smoothPrime = (lastLo: number, lastHi: number): bigint => {
      for (;;) {
        // Distinct primes, each to the first power: stage 1 raises to the largest powers up to B1 only.
        let m = 2n
        for (const prime of smallPrimes) if (next() % 2 === 0) m *= prime
        if (m < 1n << 12n) continue
        let last = BigInt(lastLo + (next() % (lastHi - lastLo)))
        while (!refIsProbablePrime(last, next) || smallPrimes.includes(last)) last++
        const p = m * last + 1n
        // Below 2^32, so that the product of two stays below 2^64.
        if (last < lastHi && p < 1n << 32n && refIsProbablePrime(p, next)) return p
      }
    }
    /** A safe prime q = 2r + 1 with r > B2, so that q - 1 has a prime factor p - 1 never reaches. */
    const safePrime = (): bigint => {
      for (;;) {
        const r = randomPrime(next, 30)
        if (refIsProbablePrime(2n * r + 1n, next)) return 2n * r + 1n
      }
    }
    for (let i = 0; i < 10; i++) {
      const p = smoothPrime(B1 + 1, B2)
      const q = safePrime()
      assert.equal(kernel.pminus1_64(p * q, B1, B2), p, `stage 2 finds ${p} of ${p} * ${q}`)
      const p1 = smoothPrime(100, B1)
      assert.equal(kernel.pminus1_64(p1 * q, B1, B2), p1, `stage 1 finds ${p1} of ${p1} * ${q}`)
      const q2 = safePrime()
      assert.equal(kernel.pminus1_64(q * q2, B1, B2), 0n, `nothing in ${q} * ${q2}`)
      // Stage 1 catches p1 before stage 2 would catch p.
      assert.equal(kernel.pminus1_64(p * p1, B1, B2), p1, `stage 1 first in ${p} * ${p1}`)
      // Both factors caught in the same stage: the gcd is n itself, which says nothing, so it answers 0.
      const p2 = smoothPrime(100, B1)
      if (p2 !== p1) assert.equal(kernel.pminus1_64(p1 * p2, B1, B2), 0n, `both of ${p1} * ${p2} at once`)
    }
  })
})

function randomPrime(next: () => number, bits: number): bigint {
  let p = randomBits(next, bits) | (1n << BigInt(bits - 1)) | 1n
  while (!refIsProbablePrime(p, next)) p += 2n
  return p
}

describe('ECM below 2^64 in the kernel', () => {
  test('ecm64 answers 0 or a proper divisor, and splits nearly every balanced 64-bit semiprime', () => {
    const next = prng(SEED + 8)
    let split = 0
    const count = 200
    for (let i = 0; i < count; i++) {
      // randomPrime may step past 2^32.
      let n = randomPrime(next, 32) * randomPrime(next, 32)
      while (n >= 1n << 64n) n = randomPrime(next, 32) * randomPrime(next, 32)
      const d = kernel.ecm64(n, 40, 300, 7500)
      if (d === 0n) continue
      assert.ok(d > 1n && d < n && n % d === 0n, `ecm64(${n}) = ${d}, seed ${SEED}`)
      split++
    }
    // None of 2400 such numbers needed more than 30 of the 40 curves when the bounds were chosen.
    assert.ok(split >= count - 4, `ecm64 split ${split} of ${count}, seed ${SEED}`)
    // Unbalanced, three factors, and sizes from 2^33 to just below 2^64.
    const cases = [
      65537n * 65539n,
      65537n * 65539n * 65543n,
      randomPrime(next, 17) * randomPrime(next, 47),
      randomPrime(next, 21) * randomPrime(next, 21) * randomPrime(next, 21),
      4294967291n * 4294967279n,
    ]
    for (const n of cases) {
      const d = kernel.ecm64(n, 40, 300, 7500)
      assert.ok(d > 1n && d < n && n % d === 0n, `ecm64(${n}) = ${d}, seed ${SEED}`)
    }
  })

  test('the first curve finds p when the order of its group mod p is smooth to the bounds', () => {
    const next = prng(SEED + 9)
    const B1 = 50
    const B2 = 2000
    // A second factor whose curve order is almost surely not smooth, so that gcds are p, not n.
    const q = randomPrime(next, 40)
    let stage1 = 0
    let stage2 = 0
    for (let tries = 0; tries < 2000 && (stage1 < 2 || stage2 < 2); tries++) {
      const p = Number(randomPrime(next, 17))
      const order = suyamaOrder(p, 6)
      if (order === undefined) continue
      const { largest, smooth } = smoothness(order, B1)
      const n = BigInt(p) * q
      if (smooth) {
        assert.equal(kernel.ecm64(n, 1, B1, B1 + 1), BigInt(p), `stage 1 finds ${p} (order ${order}) of ${n}`)
        stage1++
      } else if (largest > B1 && largest <= B2 && smoothness(order / largest, B1).smooth) {
        assert.equal(kernel.ecm64(n, 1, B1, B2), BigInt(p), `stage 2 finds ${p} (order ${order}) of ${n}`)
        stage2++
      }
    }
    assert.ok(
      stage1 >= 2 && stage2 >= 2,
      `found cases: ${stage1} for stage 1, ${stage2} for stage 2, seed ${SEED}`,
    )
  })
})

/**
 * The order of the group in which ecm64's first curve (Suyama's sigma) computes mod the prime p < 2^20: that
 * of E: y^2 = x^3 + A x^2 + x when x0^3 + A x0^2 + x0 is a square, else of its twist; counted point by point.
 * Undefined when sigma's curve is singular or x0 is a 2-torsion point mod p.
 */
function suyamaOrder(p: number, sigma: number): number | undefined {
  const mul = (a: number, b: number) => (a * b) % p
  const pow = (b: number, e: number) => {
    let r = 1
    for (let x = b % p, k = e; k > 0; k = Math.floor(k / 2), x = mul(x, x)) if (k % 2 === 1) r = mul(r, x)
    return r
  }
  const inv = (a: number) => pow(a, p - 2)
  const u = (sigma * sigma - 5) % p
  const v = (4 * sigma) % p
  const u3 = pow(u, 3)
  const v3 = pow(v, 3)
  if (u === 0 || v === 0 || v === u) return undefined
  // A + 2 = (v - u)^3 (3u + v) / (4 u^3 v).
  const a = (mul(mul(pow((v - u + p) % p, 3), (3 * u + v) % p), inv(mul(4 * u3, v))) - 2 + p) % p
  if (a === 2 || a === p - 2) return undefined
  const chi = (t: number) => (t === 0 ? 0 : pow(t, (p - 1) / 2) === 1 ? 1 : -1)
  const rhs = (x: number) => (mul(mul(x, x), x) + mul(a, mul(x, x)) + x) % p
  let sum = 0
  for (let x = 0; x < p; x++) sum += chi(rhs(x))
  const x0 = mul(u3, inv(v3))
  const onCurve = chi(rhs(x0))
  if (onCurve === 0) return undefined
  return onCurve === 1 ? p + 1 + sum : p + 1 - sum
}

/** Whether every prime power exactly dividing m is at most b1, and m's largest prime factor. */
function smoothness(m: number, b1: number): { smooth: boolean; largest: number } {
  let smooth = true
  let largest = 1
  let rest = m
  for (let d = 2; d * d <= rest; d++) {
    if (rest % d !== 0) continue
    let power = 1
    while (rest % d === 0) {
      rest /= d
      power *= d
    }
    if (power > b1) smooth = false
    largest = d
  }
  if (rest > 1) {
    if (rest > b1) smooth = false
    largest = Math.max(largest, rest)
  }
  return { smooth, largest }
}

describe('multi-limb kernel', () => {
  test('Montgomery products agree with BigInt for moduli of 1 to 40 limbs', () => {
    const next = prng(SEED + 3)
    for (let i = 0; i < 400; i++) {
      const bits = 2 + (next() % 1280)
      const n = randomBits(next, bits) | (1n << BigInt(bits - 1)) | 1n
      const k = setModulus(n)
      const r = 1n << BigInt(32 * k)
      const a = randomBits(next, bits + 8) % n
      const b = randomBits(next, bits + 8) % n
      writeSlot(40, a)
      writeSlot(41, b)
      kernel.mulN(kernel.slotPtr(42), kernel.slotPtr(40), kernel.slotPtr(41))
      // a b / R = c exactly when c R = a b (mod n).
      assert.equal((readSlot(42) * r) % n, (a * b) % n, `${a} * ${b} mod ${n}`)
      kernel.addN(kernel.slotPtr(43), kernel.slotPtr(40), kernel.slotPtr(41))
      assert.equal(readSlot(43), (a + b) % n)
    }
  })

  test('Baillie-PSW on the kernel agrees with the BigInt one', () => {
    const next = prng(SEED + 4)
    let primes = 0
    for (let i = 0; i < 600; i++) {
      const bits = 65 + (next() % 700)
      let n = randomBits(next, bits) | (1n << BigInt(bits - 1)) | 1n
      // Skip multiples of small primes, which both settle by trial division, to test the exponentiations.
      while (SMALL_ODD_PRIMES.some((p) => n % BigInt(p) === 0n)) n += 2n
      const expected = isBailliePSWBigInt(n)
      assert.equal(isBailliePSWCore(n), expected, `${n}, seed ${SEED}`)
      // Both arithmetics at every size, whichever isBailliePSWCore picks.
      assert.equal(isBailliePSWKernel(n, 32), expected, `montn: ${n}, seed ${SEED}`)
      assert.equal(isBailliePSWKernel(n, 28), expected, `mont28: ${n}, seed ${SEED}`)
      if (expected) primes++
    }
    assert.ok(primes > 5, `${primes} primes, seed ${SEED}`)
    // Products of two primes that pass trial division, and a base-2 pseudoprime (2^601 - 1).
    for (let i = 0; i < 40; i++) {
      const p = randomPrime(next, 40 + (next() % 200))
      const q = randomPrime(next, 40 + (next() % 200))
      for (const bits of [32, 28] as const) {
        assert.equal(isBailliePSWKernel(p, bits), true, `${bits}-bit limbs: ${p}`)
        assert.equal(isBailliePSWKernel(p * q, bits), false, `${bits}-bit limbs: ${p} * ${q}`)
      }
    }
    for (const bits of [32, 28] as const)
      assert.equal(isBailliePSWKernel(2n ** 601n - 1n, bits), false, `${bits}-bit limbs: 2^601 - 1`)
  })
})

describe('28-bit Montgomery arithmetic of Baillie-PSW', () => {
  test('mul28 and sqr28 agree with BigInt from 1 limb to past 10000 digits, in place and not', () => {
    const next = prng(SEED + 5)
    // Every limb count up to 90 (both sides of sqr28's cut-over at 80 and every remainder of the 8-limb SIMD
    // steps), then larger ones up to 1280 limbs: column sums split in parts (from 120 and 240 limbs), around
    // the Karatsuba cut-over (450) and its halvings to odd and even base cases (100 limbs or fewer). Then
    // moduli next to a power of two: all-ones limbs (2^(28k) - 1, whose residues n - 1 and n - 2 are all-ones
    // too) and 2^(28k - 1) + 1.
    const sizes = [
      ...Array.from({ length: 90 }, (_, i) => i + 1),
      ...[
        96, 119, 120, 121, 127, 128, 129, 160, 161, 200, 240, 241, 242, 321, 333, 356, 357, 449, 450, 451,
        452, 511, 520, 641, 900, 1279, 1280,
      ],
    ]
    const allOnes = [1, 2, 5, 79, 80, 81, 120, 121, 241, 356, 357, 450, 451, 1280]
    const nearPower = [3, 80, 356, 451]
    const moduli = [
      ...sizes.map((limbs) => ({ limbs, kind: 'random' })),
      ...allOnes.map((limbs) => ({ limbs, kind: 'all-ones' })),
      ...nearPower.map((limbs) => ({ limbs, kind: '2^(28k - 1) + 1' })),
    ]
    for (const { limbs, kind } of moduli) {
      const bits = kind === 'random' ? 28 * limbs - (next() % 28) : 28 * limbs
      const top = 1n << BigInt(bits - 1)
      const n =
        kind === 'all-ones' ? 2n * top - 1n : kind === 'random' ? randomBits(next, bits) | top | 1n : top + 1n
      const k = setModulus28(n)
      assert.equal(k, limbs, `limb count of a ${bits}-bit ${kind} modulus`)
      const r = 1n << BigInt(28 * k)
      // Random residues and the largest one, whose products stress the column sums.
      for (const [a, b] of [
        [randomBits(next, bits + 8) % n, randomBits(next, bits + 8) % n],
        [n - 1n, n - 1n],
        [n - 1n, n - 2n],
      ] as const) {
        writeLimbs28(1, a, k)
        writeLimbs28(2, b, k)
        kernel.mul28(kernel.slot28(3), kernel.slot28(1), kernel.slot28(2))
        const product = readLimbs28(3, k)
        // a b / R = c exactly when c R = a b (mod n) and c < n.
        assert.ok(product < n, `mul28 not reduced mod a ${bits}-bit n, seed ${SEED}`)
        assert.equal((product * r) % n, (a * b) % n, `mul28 ${a} * ${b} mod ${n}`)
        kernel.sqr28(kernel.slot28(1), kernel.slot28(1))
        const square = readLimbs28(1, k)
        assert.ok(square < n, `sqr28 not reduced mod a ${bits}-bit n, seed ${SEED}`)
        assert.equal((square * r) % n, (a * a) % n, `sqr28 ${a}^2 mod ${n}`)
      }
    }
  })

  test('Baillie-PSW settles large Mersenne numbers and a 4484-bit product of two', () => {
    assert.equal(isBailliePSWCore(2n ** 4423n - 1n), true, 'M4423 is prime')
    assert.equal(isBailliePSWCore(2n ** 4421n - 1n), false, '2^4421 - 1 is composite')
    // A base-2 Fermat pseudoprime (2^(M2203 M2281 - 1) = 1), which the strong test rejects.
    assert.equal(isBailliePSWCore((2n ** 2203n - 1n) * (2n ** 2281n - 1n)), false, 'M2203 M2281 is composite')
  })

  test('isBailliePSW above the kernel limit of 35840 bits goes to BigInt instead of throwing (about 8 s)', () => {
    // 2^35841 + 5 has no prime factor below 2000 (the first offset that has none), so it reaches the guard.
    assert.equal(
      isBailliePSW(2n ** 35841n + 5n),
      false,
      '2^35841 + 5 is composite (PARI: 2^(n - 1) mod n is not 1)',
    )
  })
})

describe('trial division below 2^64 in the kernel', () => {
  /**
   * Division by every odd number below 2^16 while d^2 <= rest, written independently of the code under test.
   */
  function referenceTrialDivide(n: bigint): { primes: bigint[]; rest: bigint } {
    const primes: bigint[] = []
    let rest = n
    for (let d = 2n; d < 65536n && d * d <= rest; d += d === 2n ? 1n : 2n) {
      while (rest % d === 0n) {
        primes.push(d)
        rest /= d
      }
    }
    return { primes, rest }
  }

  test('agrees with dividing by every odd number on products of small primes and a random cofactor', () => {
    const next = prng(SEED + 6)
    const edges = [65521n, 65519n, 65537n, 3n, 2n, 251n, 257n]
    for (let i = 0; i < 400; i++) {
      let n = 1n
      // Up to 5 factors below 2^16 (some at the edges), then a random cofactor up to the 64-bit limit.
      for (let f = next() % 6; f > 0; f--) {
        const factor =
          next() % 4 === 0 ? (edges[next() % edges.length] as bigint) : BigInt(2 + (next() % 65534))
        if (n * factor < 1n << 64n) n *= factor
      }
      const room = (1n << 64n) / n
      n *= 1n + (randomBits(next, 64) % room)
      assert.deepEqual(trialDivide(n), referenceTrialDivide(n), `trialDivide(${n}), seed ${SEED}`)
    }
    assert.deepEqual(trialDivide((1n << 64n) - 1n), referenceTrialDivide((1n << 64n) - 1n), '2^64 - 1')
    assert.deepEqual(
      trialDivide(65521n * 65521n * 4294967291n),
      referenceTrialDivide(65521n * 65521n * 4294967291n),
      '65521^2 p',
    )
  })

  test('agrees with dividing by every odd number from 2^64 to 2^160, across the limb path and the BigInt one', () => {
    const next = prng(SEED + 7)
    const edges = [65521n, 65519n, 65537n, 3n, 2n, 251n, 257n]
    for (let i = 0; i < 60; i++) {
      const bits = 65 + (next() % 96)
      let n = 1n
      for (let f = next() % 6; f > 0; f--) {
        n *= next() % 4 === 0 ? (edges[next() % edges.length] as bigint) : BigInt(2 + (next() % 65534))
      }
      n *= (randomBits(next, bits) >> BigInt(n.toString(2).length)) | 1n
      if (n < 1n << 64n) n += 1n << 64n
      assert.deepEqual(trialDivide(n), referenceTrialDivide(n), `trialDivide(${n}), seed ${SEED}`)
    }
    const square = 65521n * 65521n * (2n ** 127n - 1n)
    assert.deepEqual(trialDivide(square), referenceTrialDivide(square), '65521^2 (2^127 - 1)')
    // Five full limbs; and a cofactor that falls below 2^64 midway, where the word version carries on.
    const allOnes = 2n ** 160n - 1n
    assert.deepEqual(trialDivide(allOnes), referenceTrialDivide(allOnes), '2^160 - 1')
    const dropping = 3n * 65519n * 65521n * (2n ** 64n - 59n)
    assert.deepEqual(trialDivide(dropping), referenceTrialDivide(dropping), '3 65519 65521 (2^64 - 59)')
  })
})

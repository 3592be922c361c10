import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Budget } from '../../../src/algorithms/prime-checker/budget.js'
import {
  ECM_MONTN_MAX_LIMBS,
  ecm,
  ecmCurve,
  ecmKernel,
  ecmMultiply,
} from '../../../src/algorithms/prime-checker/ecm.js'
import { factorize } from '../../../src/algorithms/prime-checker/factorize.js'
import { chainFrom } from '../../../src/algorithms/prime-checker/prac.js'
import { prng, randomBits, refIsProbablePrime, testSeed } from '../../helpers/reference-math.js'

const SEED = testSeed('ecm.test.ts')
/** The /invoke factorisation budget: ALGOSERVE_INVOKE_FACTOR_BUDGET_MS's default (docs/settings.md). */
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

function mod(a: bigint, n: bigint): bigint {
  return ((a % n) + n) % n
}

/** x^-1 mod n, throwing when there is none. */
function inverse(x: bigint, n: bigint): bigint {
  let [r0, r1] = [mod(x, n), n]
  let [s0, s1] = [1n, 0n]
  while (r1 !== 0n) {
    const q = r0 / r1
    ;[r0, r1] = [r1, r0 - q * r1]
    ;[s0, s1] = [s1, s0 - q * s1]
  }
  if (r0 !== 1n) throw new Error(`${x} has no inverse mod ${n}`)
  return mod(s0, n)
}

/**
 * Suyama's curve for sigma modulo a prime n: A, and B chosen so that P = (x0, 1) lies on
 * B y^2 = x^3 + A x^2 + x.
 */
function suyama(n: bigint, sigma: bigint): { a: bigint; b: bigint; x0: bigint } {
  const u = mod(sigma * sigma - 5n, n)
  const v = mod(4n * sigma, n)
  const x0 = mod(u ** 3n * inverse(v ** 3n, n), n)
  const a = mod((v - u) ** 3n * (3n * u + v) * inverse(4n * u ** 3n * v, n) - 2n, n)
  return { a, b: mod(x0 ** 3n + a * x0 * x0 + x0, n), x0 }
}

/**
 * x(e P) for Suyama's curve and point of sigma modulo a prime n, or undefined for the identity, independently
 * of the kernel's X:Z formulas: affine double-and-add with y.
 */
function referenceMultiple(n: bigint, sigma: bigint, e: number): bigint | undefined {
  const { a, b, x0 } = suyama(n, sigma)
  type Point = [bigint, bigint] | undefined
  const add = (p: Point, q: Point): Point => {
    if (p === undefined) return q
    if (q === undefined) return p
    const [x1, y1] = p
    const [x2, y2] = q
    if (x1 === x2 && mod(y1 + y2, n) === 0n) return undefined
    const slope =
      x1 === x2
        ? mod((3n * x1 * x1 + 2n * a * x1 + 1n) * inverse(2n * b * y1, n), n)
        : mod((y2 - y1) * inverse(x2 - x1, n), n)
    const x3 = mod(b * slope * slope - a - x1 - x2, n)
    return [x3, mod(slope * (x1 - x3) - y1, n)]
  }
  let result: Point
  let power: Point = [x0, 1n]
  for (let k = e; k > 0; k = Math.floor(k / 2)) {
    if (k % 2 === 1) result = add(result, power)
    power = add(power, power)
  }
  return result?.[0]
}

/**
 * The order of Suyama's point for sigma modulo a prime p < 2^26 (so that products of residues are exact in
 * doubles): the group order by counting points, #E = p + 1 + (B / p) sum over x of (x^3 + A x^2 + x / p),
 * then divided by each prime while the reference multiple stays the identity.
 */
function pointOrder(p: number, sigma: bigint): number {
  const { a, b } = suyama(BigInt(p), sigma)
  const square = new Uint8Array(p)
  for (let y = 1; y <= (p - 1) / 2; y++) square[(y * y) % p] = 1
  const chi = (t: number): number => (t === 0 ? 0 : square[t] === 1 ? 1 : -1)
  const an = Number(a)
  let sum = 0
  for (let x = 0; x < p; x++) sum += chi(((((((x + an) % p) * x) % p) + 1) * x) % p)
  let order = p + 1 + chi(Number(b)) * sum
  for (const [r] of primeFactors(order)) {
    while (order % r === 0 && referenceMultiple(BigInt(p), sigma, order / r) === undefined) order /= r
  }
  return order
}

function primeFactors(m: number): [number, number][] {
  const factors: [number, number][] = []
  for (let r = 2; r * r <= m; r++) {
    let e = 0
    while (m % r === 0) {
      m /= r
      e++
    }
    if (e > 0) factors.push([r, e])
  }
  if (m > 1) factors.push([m, 1])
  return factors
}

/**
 * What one curve with stage 1 to b1 (the largest power of each prime up to b1) and stage 2 to b2 finds for a
 * point of this order: 'stage 1' when those powers kill it, 'stage 2' when one prime in (b1, b2] is left,
 * 'none' when a prime above b2 + 2310 is left (past every giant step) and nothing else.
 */
function expectedStage(order: number, b1: number, b2: number): 'stage 1' | 'stage 2' | 'none' | 'other' {
  let left = order
  for (const [r, e] of primeFactors(order)) {
    let power = 1
    for (let i = 0; i < e && power * r <= b1; i++) power *= r
    left /= power
  }
  if (left === 1) return 'stage 1'
  const rest = primeFactors(left)
  if (rest.length !== 1 || rest[0]?.[1] !== 1) return 'other'
  if (left > b1 && left <= b2) return 'stage 2'
  return left > b2 + 2310 ? 'none' : 'other'
}

describe('ECM point arithmetic', () => {
  // Moduli of 1 to 40 32-bit limbs, with both sides of the montn / mont28 crossover, and 28-bit limb counts
  // at and past whole 8-limb SIMD steps (224, 225, 448 and 449 bits).
  const sizes = [
    32,
    64,
    96,
    224,
    225,
    448,
    449,
    32 * ECM_MONTN_MAX_LIMBS - 1,
    32 * ECM_MONTN_MAX_LIMBS,
    32 * ECM_MONTN_MAX_LIMBS + 1,
  ]
  sizes.push(32 * ECM_MONTN_MAX_LIMBS + 32, 1000, 1280)
  test('e P on montn and on mont28 agrees with affine BigInt arithmetic', () => {
    const next = prng(SEED + 10)
    for (const bits of sizes) {
      const n = randomPrime(next, bits)
      const sigma = 6n + BigInt(next() % 1000)
      for (const e of [2, 3, 5, 6, 7, 1024, 1 + (next() % 65536), 4294967291]) {
        const expected = referenceMultiple(n, sigma, e)
        for (const limbBits of [32, 28] as const) {
          const got = ecmMultiply(n, sigma, e, limbBits)
          const context = `${e} P, sigma ${sigma}, ${bits}-bit n = ${n}, ${limbBits}-bit limbs, seed ${SEED}`
          assert.ok(typeof got !== 'bigint', `curve setup found a divisor ${got}: ${context}`)
          const [x, z] = got
          assert.equal(mod(x * inverse(z, n), n), expected, context)
        }
      }
    }
  })
})

describe('ECM stage 1 chains', () => {
  test('PRAC chains from every r for some primes multiply by the prime, with all nine rules used', () => {
    const next = prng(SEED + 13)
    const n = randomPrime(next, 600)
    const sigma = 6n + BigInt(next() % 1000)
    const used = new Set<number>()
    for (const p of [3, 5, 7, 11, 13, 101, 257, 1009, 65537]) {
      const expected = referenceMultiple(n, sigma, p)
      // Every r of a prime works (gcd(p, r) = 1); rules past 3 come from r far from p / golden ratio.
      for (let r = Math.floor(p / 2) + 1; r < p; r += Math.max(1, Math.floor(p / 300))) {
        const ops = chainFrom(p, r)
        assert.ok(ops !== undefined, `no chain for ${p} from r = ${r}`)
        for (const op of ops) used.add(op % 16)
        for (const limbBits of [32, 28] as const) {
          const got = ecmMultiply(n, sigma, Uint8Array.from(ops), limbBits)
          const context = `${p} P from r = ${r}, sigma ${sigma}, ${limbBits}-bit limbs, seed ${SEED}`
          assert.ok(typeof got !== 'bigint', `curve setup found a divisor ${got}: ${context}`)
          assert.equal(mod(got[0] * inverse(got[1], n), n), expected, context)
        }
      }
    }
    for (let rule = 1; rule <= 9; rule++) assert.ok(used.has(rule), `rule ${rule} never used`)
  })
})

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

  test('finds 40-bit factors on both arithmetics, at and next to the crossover size', () => {
    const next = prng(SEED + 11)
    for (const limbs of [ECM_MONTN_MAX_LIMBS - 1, ECM_MONTN_MAX_LIMBS, ECM_MONTN_MAX_LIMBS + 1, 32]) {
      const p = randomPrime(next, 40)
      // q makes n exactly 32 limbs long: 32 (limbs - 1) + 1 to 32 limbs bits.
      let q = randomPrime(next, 32 * limbs - 40)
      while (p * q < 1n << BigInt(32 * limbs - 1)) q = randomPrime(next, 32 * limbs - 40)
      const n = p * q
      for (const limbBits of [undefined, 32, 28] as const) {
        const budget = new Budget(performance.now() + GENEROUS_MS)
        const d = limbBits === undefined ? ecm(n, budget) : ecmKernel(n, budget, limbBits)
        const context = `${limbs} limbs, ${limbBits ?? 'chosen'}-bit arithmetic: ecm(${p} * ${q}) = ${d}, seed ${SEED}`
        assert.ok(d === p || d === q, context)
      }
    }
  })

  test('one curve finds p exactly when the order of its point mod p is B1-smooth but for one prime up to B2', () => {
    const next = prng(SEED + 12)
    // Stage 2 with D = 210 (B1 = 150) and with D = 2310 (B1 = 2000), B2 = 100 B1, on both arithmetics.
    for (const b1 of [150, 2000]) {
      const seen = { 'stage 1': 0, 'stage 2': 0, none: 0, other: 0 }
      // An odd start; about 1 prime in 14 near 10^6, and each kind of curve comes every few primes.
      let p = 1_000_001 + 2 * (next() % 500_000)
      while (seen['stage 2'] < 3 || (b1 === 150 && seen.none < 1) || seen['stage 1'] < 1) {
        p += 2
        assert.ok(
          p < 3_000_000,
          `no curves of every kind below p = ${p}: ${JSON.stringify(seen)}, seed ${SEED}`,
        )
        if (!refIsProbablePrime(BigInt(p), next)) continue
        const sigma = 6n + BigInt(next() % 10_000)
        const stage = expectedStage(pointOrder(p, sigma), b1, 100 * b1)
        if (stage === 'other' || (stage !== 'stage 2' && seen[stage] > 0)) continue
        seen[stage]++
        for (const [limbBits, bits] of [
          [32, 200],
          [28, 600],
        ] as const) {
          const n = BigInt(p) * randomPrime(next, bits)
          const found = ecmCurve(n, sigma, b1, limbBits, new Budget(performance.now() + GENEROUS_MS))
          const expected: bigint = stage === 'none' ? 1n : BigInt(p)
          const context: string = `p = ${p}, sigma ${sigma}, B1 ${b1}: ${stage}, ${limbBits}-bit limbs, seed ${SEED}`
          assert.equal(found, expected, context)
        }
      }
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

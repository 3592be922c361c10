import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Budget } from '../../../src/algorithms/prime-checker/budget.js'
import { factorize } from '../../../src/algorithms/prime-checker/factorize.js'
import { ensureBytes, kernel, limbCount, writeLimbs } from '../../../src/algorithms/prime-checker/kernel.js'
import { quadraticSieve } from '../../../src/algorithms/prime-checker/quadratic-sieve.js'
import { prng, randomBits, refIsProbablePrime, refModPow, testSeed } from '../../helpers/reference-math.js'

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

describe("quadratic sieve's kernel loops", () => {
  test('qsFactorBase keeps exactly the odd primes with kN a square, with square roots and rounded logs', () => {
    const next = prng(SEED + 7)
    for (let round = 0; round < 20; round++) {
      const kn = randomBits(next, 64 + (next() % 90)) | 1n
      const limbs = limbCount(kn)
      writeLimbs(kernel.qsKn(), kn, limbs)
      const count = kernel.qsFactorBase(limbs, 300)
      const memory = kernel.memory.buffer
      const primes = new Int32Array(memory, kernel.qsPrimes(), count)
      const roots = new Int32Array(memory, kernel.qsSqrts(), count)
      const logs = new Uint8Array(memory, kernel.qsLogs(), count)
      assert.equal(count, 300, `a full factor base for ${kn}, seed ${SEED}`)
      assert.equal(primes[0], 2, `2 first for ${kn}`)
      let index = 1
      for (let p = 3; p <= (primes[count - 1] as number); p += 2) {
        if (!refIsProbablePrime(BigInt(p), next)) continue
        const r = kn % BigInt(p)
        const square = r === 0n || refModPow(r, BigInt((p - 1) / 2), BigInt(p)) === 1n
        if (!square) continue
        assert.equal(primes[index], p, `factor base of ${kn} at ${index}, seed ${SEED}`)
        const root = BigInt(roots[index] as number)
        assert.equal((root * root) % BigInt(p), r, `root ${root} of ${kn} mod ${p}, seed ${SEED}`)
        assert.equal(logs[index], Math.round(Math.log2(p)), `log of ${p}`)
        index++
      }
      assert.equal(index, count, `every prime of the factor base of ${kn} checked, seed ${SEED}`)
    }
  })

  test('qsLegendre gives the Legendre symbol of N for each of the first odd primes', () => {
    const next = prng(SEED + 8)
    const oddPrimes: number[] = []
    for (let p = 3; oddPrimes.length < 167; p += 2) if (refIsProbablePrime(BigInt(p), next)) oddPrimes.push(p)
    for (let round = 0; round < 20; round++) {
      // Some rounds make N a multiple of a few of the primes, for the symbol 0.
      let n = randomBits(next, 64 + (next() % 90)) | 1n
      if (round % 4 === 0) n *= 3n * 997n
      const limbs = limbCount(n)
      writeLimbs(kernel.qsKn(), n, limbs)
      kernel.qsLegendre(limbs, oddPrimes.length)
      const symbols = new Int32Array(kernel.memory.buffer, kernel.qsHits(), oddPrimes.length)
      oddPrimes.forEach((p, i) => {
        const r = n % BigInt(p)
        const expected = r === 0n ? 0 : refModPow(r, BigInt((p - 1) / 2), BigInt(p)) === 1n ? 1 : -1
        assert.equal(symbols[i], expected, `(${n} / ${p}), seed ${SEED}`)
      })
    }
  })

  test('qsEliminate leaves each unpivoted row as a combination of original rows that sums to zero', () => {
    const next = prng(SEED + 9)
    for (const [rows, columns] of [
      [40, 30],
      [100, 96],
      [150, 129],
    ] as const) {
      const rowWords = (columns + 31) >>> 5
      const stride = rowWords + ((rows + 31) >>> 5)
      const base = kernel.modulusPtr()
      const matrixBytes = rows * stride * 4
      ensureBytes(base + matrixBytes + rows)
      const matrix = new Uint32Array(kernel.memory.buffer, base, rows * stride).fill(0)
      const pivoted = new Uint8Array(kernel.memory.buffer, base + matrixBytes, rows).fill(0)
      // Sparse random rows, as relations are, each with its own history bit.
      const original: number[][] = []
      for (let r = 0; r < rows; r++) {
        const bits: number[] = []
        for (let k = 0; k < 6; k++) bits.push(next() % columns)
        original.push(bits)
        for (const c of bits)
          matrix[r * stride + (c >>> 5)] = (matrix[r * stride + (c >>> 5)] as number) ^ (1 << (c & 31))
        matrix[r * stride + rowWords + (r >>> 5)] = 1 << (r & 31)
      }
      // In two calls, as solve() makes them, split mid-column-range.
      kernel.qsEliminate(base, rows, stride, 0, 17, base + matrixBytes)
      kernel.qsEliminate(base, rows, stride, 17, columns, base + matrixBytes)
      let dependencies = 0
      for (let r = 0; r < rows; r++) {
        if (pivoted[r]) continue
        dependencies++
        const sum = new Uint8Array(columns)
        let used = 0
        for (let o = 0; o < rows; o++) {
          if (((matrix[r * stride + rowWords + (o >>> 5)] as number) & (1 << (o & 31))) === 0) continue
          used++
          for (const c of original[o] as number[]) sum[c] = (sum[c] as number) ^ 1
        }
        assert.ok(used > 0, `row ${r} of ${rows} x ${columns} combines no rows`)
        assert.ok(
          sum.every((bit) => bit === 0),
          `row ${r} of ${rows} x ${columns}: its rows do not sum to zero, seed ${SEED}`,
        )
      }
      assert.ok(dependencies >= rows - columns, `${dependencies} dependencies of ${rows} x ${columns}`)
    }
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Budget } from '../../../src/algorithms/prime-checker/budget.js'
import { factorize } from '../../../src/algorithms/prime-checker/factorize.js'
import { ensureBytes, kernel, limbCount, writeLimbs } from '../../../src/algorithms/prime-checker/kernel.js'
import { quadraticSieve } from '../../../src/algorithms/prime-checker/quadratic-sieve.js'
import {
  prng,
  randomBits,
  randomPrimeOfDigits as randomPrime,
  refIsProbablePrime,
  refModPow,
  testSeed,
} from '../../helpers/reference-math.js'

const SEED = testSeed('quadratic-sieve.test.ts')
const GENEROUS_MS = 120_000

/** Checks that quadraticSieve returns a nontrivial divisor of n within a generous budget. */
function assertSplits(n: bigint, context: string): bigint {
  const d = quadraticSieve(n, new Budget(performance.now() + GENEROUS_MS))
  assert.ok(d !== undefined, `no divisor of ${n} (${context}), seed ${SEED}`)
  assert.ok(d > 1n && d < n, `trivial divisor ${d} of ${n} (${context}), seed ${SEED}`)
  assert.equal(n % d, 0n, `${d} does not divide ${n} (${context}), seed ${SEED}`)
  return d
}

describe('quadratic sieve', () => {
  for (const digits of [20, 25, 30, 35, 40, 50]) {
    test(`splits balanced ${digits}-digit semiprimes into their primes`, () => {
      const next = prng(SEED + digits)
      const runs = digits <= 30 ? 3 : 1
      // From 50 digits the double large prime variation and cycle-combined relations are in play.
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

  for (const digits of [20, 30, 40, 50]) {
    test(`factorize completes balanced ${digits}-digit semiprimes, each factor proven prime independently`, () => {
      const next = prng(SEED + 6 + digits)
      const lo = 10n ** BigInt(digits - 1)
      for (let i = 0; i < (digits <= 30 ? 3 : 1); i++) {
        let p = 0n
        let q = 0n
        while (p * q < lo || p * q >= 10n * lo || p === q) {
          p = randomPrime(next, Math.floor(digits / 2))
          q = randomPrime(next, Math.ceil(digits / 2))
        }
        const { factors, complete } = factorize(p * q, { deadline: performance.now() + GENEROUS_MS })
        const context = `${p} * ${q} gave ${factors.join(' * ')}, seed ${SEED}`
        assert.ok(complete, context)
        assert.equal(factors.length, 2, context)
        assert.equal(
          factors.reduce((a, b) => a * b, 1n),
          p * q,
          context,
        )
        for (const f of factors) assert.ok(refIsProbablePrime(f, next), `${f} is not prime: ${context}`)
      }
    })
  }
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
      // Whole 16-byte vectors per row, from a 16-byte aligned base, as the kernel's XOR needs.
      const stride = (rowWords + ((rows + 31) >>> 5) + 3) & ~3
      const base = (kernel.modulusPtr() + 15) & ~15
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

describe("quadratic sieve's sieve and roots against BigInt", () => {
  /** A factor base of `size` primes for a random kN, with views of the kernel's arrays. */
  function factorBaseFor(next: () => number, size: number) {
    const kn = randomBits(next, 150 + (next() % 80)) | 1n
    const limbs = limbCount(kn)
    writeLimbs(kernel.qsKn(), kn, limbs)
    const count = kernel.qsFactorBase(limbs, size)
    const memory = kernel.memory.buffer
    return {
      kn,
      limbs,
      count,
      primes: new Int32Array(memory, kernel.qsPrimes(), count),
      sqrts: new Int32Array(memory, kernel.qsSqrts(), count),
      root1: new Int32Array(memory, kernel.qsRoot1(), count),
      root2: new Int32Array(memory, kernel.qsRoot2(), count),
      logs: new Uint8Array(memory, kernel.qsLogs(), count),
    }
  }

  test('qsFactorBase goes past 2^16 with primes that are quadratic residues', () => {
    const next = prng(SEED + 10)
    const { kn, count, primes, sqrts } = factorBaseFor(next, 8000)
    assert.equal(count, 8000)
    assert.ok((primes[count - 1] as number) > 65536)
    for (let i = count - 50; i < count; i++) {
      const p = BigInt(primes[i] as number)
      assert.ok(refIsProbablePrime(p, next), `${p} is not prime`)
      const r = BigInt(sqrts[i] as number)
      assert.equal((r * r) % p, kn % p, `root ${r} of ${kn} mod ${p}, seed ${SEED}`)
    }
  })

  test('qsNewA puts the roots where p divides (A x + B)^2 - kN, and qsDividing finds exactly those primes', () => {
    const next = prng(SEED + 11)
    const fb = factorBaseFor(next, 3000)
    const s = 5
    // A: a product of factor-base primes; B's terms: any numbers below A (the roots' formula holds for any
    // B).
    const aIndices = [300, 420, 555, 700, 871]
    const a = aIndices.reduce((x, i) => x * BigInt(fb.primes[i] as number), 1n)
    const terms = Array.from({ length: s }, () => randomBits(next, 60) % a)
    const b = terms.reduce((x, y) => x + y, 0n)
    const stride = 8 * 4
    writeLimbs(kernel.qsTerms(), a, fb.limbs)
    terms.forEach((t, l) => {
      writeLimbs(kernel.qsTerms() + stride * (l + 1), t, fb.limbs)
    })
    const half = 40_000
    kernel.qsNewA(fb.count, s, half, fb.limbs)
    // qsNewA leaves A's primes to its caller, which marks them with a root of -1 (quadraticSieve does).
    for (const i of aIndices) {
      fb.root1[i] = -1
      fb.root2[i] = -1
    }
    for (let i = 1; i < fb.count; i++) {
      if (aIndices.includes(i)) continue
      const p = BigInt(fb.primes[i] as number)
      for (const root of [fb.root1[i] as number, fb.root2[i] as number]) {
        const x = BigInt(root - half)
        const g = (a * x + b) ** 2n - fb.kn
        assert.equal(((g % p) + p) % p, 0n, `p = ${p} at root ${root}, seed ${SEED}`)
      }
    }
    for (let round = 0; round < 200; round++) {
      const j = next() % (2 * half)
      const count = kernel.qsDividing(j, fb.count)
      const found = Array.from(new Int32Array(kernel.memory.buffer, kernel.qsHits(), count))
      const expected: number[] = []
      for (let i = 1; i < fb.count; i++) {
        if (aIndices.includes(i)) continue
        const p = BigInt(fb.primes[i] as number)
        const x = BigInt(j - half)
        if (((((a * x + b) ** 2n - fb.kn) % p) + p) % p === 0n) expected.push(i)
      }
      assert.deepEqual(found, expected, `primes dividing at ${j}, seed ${SEED}`)
    }
  })

  test('qsResieve and qsDividingResieved find exactly the primes that divide each candidate, as BigInt does', () => {
    const next = prng(SEED + 14)
    for (let round = 0; round < 3; round++) {
      const fb = factorBaseFor(next, 2000 + (next() % 4000))
      const s = 4
      const aIndices = Array.from({ length: s }, (_, l) => 200 + 97 * l + (next() % 90))
      const a = aIndices.reduce((x, i) => x * BigInt(fb.primes[i] as number), 1n)
      const terms = Array.from({ length: s }, () => randomBits(next, 60) % a)
      const b = terms.reduce((x, y) => x + y, 0n)
      writeLimbs(kernel.qsTerms(), a, fb.limbs)
      terms.forEach((t, l) => {
        writeLimbs(kernel.qsTerms() + 8 * 4 * (l + 1), t, fb.limbs)
      })
      const half = 50_000
      const width = 2 * half
      kernel.qsNewA(fb.count, s, half, fb.limbs)
      for (const i of aIndices) {
        fb.root1[i] = -1
        fb.root2[i] = -1
      }
      // A threshold loose enough for a few hundred candidates, from the primes above 30 as quadraticSieve
      // sieves.
      const first = 10
      let found = 0
      for (let threshold = 60; found < 200 && threshold > 0; threshold--) {
        found = kernel.qsSieve(width, first, fb.count, 128 - threshold)
      }
      assert.ok(found >= 200 && found < 4096, `${found} candidates`)
      const candidates = Array.from(new Int32Array(kernel.memory.buffer, kernel.qsCandidates(), found))
      // From a middle prime, and from the first sieved one (every sieved prime resieved).
      for (const from of [first, 1 + (next() % (fb.count - 1))]) {
        assert.ok(kernel.qsResieve(width, from, fb.count, found) >= 0)
        candidates.forEach((j, c) => {
          const count = kernel.qsDividingResieved(j, c, from)
          const listed = Array.from(new Int32Array(kernel.memory.buffer, kernel.qsHits(), count))
          const x = BigInt(j - half)
          const g = (a * x + b) ** 2n - fb.kn
          const expected: number[] = []
          for (let i = 1; i < fb.count; i++) {
            if (aIndices.includes(i)) continue
            const p = BigInt(fb.primes[i] as number)
            if (g % p === 0n) expected.push(i)
          }
          assert.deepEqual(listed, expected, `primes dividing at ${j}, resieved from ${from}, seed ${SEED}`)
        })
      }
    }
  })

  test('qsDividing is exact where its float quotient is closest to wrong: remainders 0 and p - 1', () => {
    const next = prng(SEED + 13)
    const fb = factorBaseFor(next, 8000)
    for (let i = 1; i < fb.count; i++) {
      fb.root1[i] = 0
      fb.root2[i] = (fb.primes[i] as number) - 1
    }
    for (let round = 0; round < 400; round++) {
      // Multiples of a factor-base prime and their neighbours below, up to the widest sieve.
      const p = fb.primes[1 + (next() % (fb.count - 1))] as number
      const j = Math.min(131071, p * (1 + (next() % Math.max(1, Math.floor(131072 / p) - 1)))) - (round & 1)
      const count = kernel.qsDividing(j, fb.count)
      const found = Array.from(new Int32Array(kernel.memory.buffer, kernel.qsHits(), count))
      const expected: number[] = []
      for (let i = 1; i < fb.count; i++) {
        const q = fb.primes[i] as number
        if (j % q === 0 || j % q === q - 1) expected.push(i)
      }
      assert.deepEqual(found, expected, `primes with remainder 0 or p - 1 at ${j}, seed ${SEED}`)
    }
  })

  test('qsSieve lists the positions whose primes add up past the threshold, over several blocks', () => {
    const next = prng(SEED + 12)
    const fb = factorBaseFor(next, 6000)
    const width = 131072
    // Random roots, some primes with one root (as for p dividing k) and some skipped (as for A's primes).
    for (let i = 1; i < fb.count; i++) {
      const p = fb.primes[i] as number
      fb.root1[i] = next() % p
      fb.root2[i] = i % 17 === 0 ? (fb.root1[i] as number) : next() % p
      if (i % 101 === 0) fb.root1[i] = -1
    }
    const first = 5
    const sums = new Int32Array(width)
    for (let i = first; i < fb.count; i++) {
      const r1 = fb.root1[i] as number
      if (r1 < 0) continue
      const p = fb.primes[i] as number
      const r2 = fb.root2[i] as number
      const lg = fb.logs[i] as number
      for (let j = r1; j < width; j += p) sums[j] = (sums[j] as number) + lg
      if (r2 !== r1) for (let j = r2; j < width; j += p) sums[j] = (sums[j] as number) + lg
    }
    // The lowest threshold passed by fewer than 2,000 positions (the kernel lists at most 4,096), so
    // that every seed's roots give a full list to compare.
    const passing = (init: number) => {
      const positions: number[] = []
      sums.forEach((sum, j) => {
        if ((init + sum) % 256 >= 128) positions.push(j)
      })
      return positions
    }
    let threshold = 40
    while (passing(128 - threshold).length >= 2000) threshold++
    const init = 128 - threshold
    const expected = passing(init)
    assert.ok(expected.length > 10, `${expected.length} positions at threshold ${threshold}`)
    const count = kernel.qsSieve(width, first, fb.count, init)
    const found = Array.from(new Int32Array(kernel.memory.buffer, kernel.qsCandidates(), count))
    assert.deepEqual(found, expected, `seed ${SEED}`)
  })
})

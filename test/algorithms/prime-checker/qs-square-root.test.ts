import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Relation } from '../../../src/algorithms/prime-checker/qs-sieve.js'
import { squareRoot } from '../../../src/algorithms/prime-checker/qs-square-root.js'

// Hand-made dependencies for n = 1649 = 17 * 97 over the factor base 2, 3, 5, 7 (indices 0 to 3), each
// relation y^2 = (-1)^neg * its primes (mod n), checked by hand below.
const N = 1649n
const PRIMES = Int32Array.from([2, 3, 5, 7])

function relation(y: bigint, neg: boolean, indices: number[], large: number[] = []): Relation {
  return { y, neg, indices, large }
}

describe("quadratic sieve's square root step", () => {
  test('turns a dependency of full relations into a factor: 41^2 = 2^5, 43^2 = 2^3 5^2 (mod 1649)', () => {
    // (41 * 43)^2 = (2^4 * 5)^2: X = 1763 = 114 and Z = 80 (mod 1649), gcd(34, 1649) = 17.
    const chosen = [relation(41n, false, [0, 0, 0, 0, 0]), relation(43n, false, [0, 0, 0, 2, 2])]
    assert.equal(squareRoot(N, PRIMES, chosen), 17n)
  })

  test('halves the large primes and cancels the signs: 70^2 = -47, 113^2 = -3^2 47 (mod 1649)', () => {
    // (70 * 113)^2 = (3 * 47)^2: X = 1314 and Z = 141 (mod 1649), gcd(1173, 1649) = 17.
    const chosen = [relation(70n, true, [], [47]), relation(113n, true, [1, 1], [47])]
    assert.equal(squareRoot(N, PRIMES, chosen), 17n)
  })

  test('gives the other factor where X - Z falls on it: 45^2 = 2^3 47, 71^2 = 2 47 (mod 1649)', () => {
    // (45 * 71)^2 = (2^2 * 47)^2: X = 1546 and Z = 188 (mod 1649), gcd(1358, 1649) = 97.
    const chosen = [relation(45n, false, [0, 0, 0], [47]), relation(71n, false, [0], [47])]
    assert.equal(squareRoot(N, PRIMES, chosen), 97n)
  })

  test('gives n for a trivial dependency, X = Z: 45 and 90 = 2 * 45', () => {
    const chosen = [relation(45n, false, [0, 0, 0], [47]), relation(90n, false, [0, 0, 0, 0, 0], [47])]
    assert.equal(squareRoot(N, PRIMES, chosen), N)
  })
})

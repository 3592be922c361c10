// The square root step of the quadratic sieve: a dependency found by qs-matrix.ts is a set of relations
// whose product is X^2 = Z^2 (mod n), X the product of their y and Z the square root of the product of
// their sides, known from the halved exponents of the factor-base primes and large primes; gcd(X - Z, n)
// then splits n with probability at least 1/2. Apart from the sieve and the matrix, as it needs only the
// relations and the factor base's primes.
import { gcd } from './bigint-math.js'
import type { Relation } from './qs-sieve.js'

/**
 * gcd(X - Z, n) for X the product of the dependency's y and Z the square root of the product of its sides:
 * the factor-base primes' halved exponents, and each large prime to half its (even) count.
 */
export function squareRoot(n: bigint, primes: Int32Array, chosen: Relation[]): bigint {
  const exponents = new Int32Array(primes.length)
  const large = new Map<number, number>()
  let x = 1n
  let z = 1n
  for (const r of chosen) {
    x = (x * r.y) % n
    for (const i of r.indices) exponents[i] = (exponents[i] as number) + 1
    for (const l of r.large) large.set(l, (large.get(l) ?? 0) + 1)
  }
  for (const [l, count] of large) z = (z * BigInt(l) ** BigInt(count >> 1)) % n
  // Primes are below 2^31: products of up to 2^22 times one stay exact on a double before one BigInt product.
  let chunk = 1
  for (let i = 0; i < primes.length; i++) {
    const p = primes[i] as number
    for (let e = (exponents[i] as number) >> 1; e > 0; e--) {
      chunk *= p
      if (chunk >= 2 ** 22) {
        z = (z * BigInt(chunk)) % n
        chunk = 1
      }
    }
  }
  z = (z * BigInt(chunk)) % n
  return gcd(x - z, n)
}

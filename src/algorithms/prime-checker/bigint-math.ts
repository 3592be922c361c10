/** Integer helpers on BigInt shared by the primality tests and the factoriser. */

export function abs(n: bigint): bigint {
  return n < 0n ? -n : n
}

/** Greatest common divisor, always non-negative; gcd(0, 0) = 0. */
export function gcd(a: bigint, b: bigint): bigint {
  let x = abs(a)
  let y = abs(b)
  while (y !== 0n) [x, y] = [y, x % y]
  return x
}

/** base^exp mod mod (mod > 0, exp >= 0) by left-to-right square-and-multiply; the result is in [0, mod). */
export function modPow(base: bigint, exp: bigint, mod: bigint): bigint {
  if (mod <= 0n) throw new RangeError('modPow: modulus must be positive')
  if (exp < 0n) throw new RangeError('modPow: exponent must be non-negative')
  const b = ((base % mod) + mod) % mod
  let result = 1n % mod
  // The binary string walks the exponent's bits from the most significant one without a loop over shifts.
  for (const bit of exp.toString(2)) {
    result = (result * result) % mod
    if (bit === '1') result = (result * b) % mod
  }
  return result
}

/**
 * Number of bits in |n|; bitLength(0) = 0. Hex digits give it in one linear pass instead of a loop over bits.
 */
export function bitLength(n: bigint): number {
  if (n === 0n) return 0
  const hex = abs(n).toString(16)
  return (hex.length - 1) * 4 + 32 - Math.clz32(Number.parseInt(hex.slice(0, 1), 16))
}

/** floor(sqrt(n)) for n >= 0. */
export function isqrt(n: bigint): bigint {
  return iroot(n, 2)
}

/** floor(n^(1/k)) for n >= 0 and integer k >= 1, by Newton's method. */
export function iroot(n: bigint, k: number): bigint {
  if (n < 0n) throw new RangeError('iroot: n must be non-negative')
  if (!Number.isInteger(k) || k < 1) throw new RangeError('iroot: k must be a positive integer')
  if (n < 2n || k === 1) return n
  const kBig = BigInt(k)
  const step = (x: bigint): bigint => ((kBig - 1n) * x + n / x ** (kBig - 1n)) / kBig
  // One step from any positive guess lands on or above the floor root (AM-GM), and from there the iterates
  // decrease strictly until they reach it.
  let x = step(rootGuess(n, k))
  for (let next = step(x); next < x; next = step(x)) x = next
  return x
}

/** A root estimate good to about double precision, so Newton needs only a few steps even for large k. */
function rootGuess(n: bigint, k: number): bigint {
  const shift = Math.max(0, bitLength(n) - 53)
  const log2Root = (Math.log2(Number(n >> BigInt(shift))) + shift) / k
  const scale = Math.max(0, Math.floor(log2Root) - 52)
  return BigInt(Math.ceil(2 ** (log2Root - scale))) << BigInt(scale)
}

/** Jacobi symbol (a/n) for odd n > 0: -1, 0 or 1. */
export function jacobi(a: bigint, n: bigint): number {
  if (n <= 0n || (n & 1n) === 0n) throw new RangeError('jacobi: n must be a positive odd integer')
  let x = ((a % n) + n) % n
  let m = n
  let result = 1
  while (x !== 0n) {
    // (2/m) = -1 exactly when m = 3 or 5 (mod 8).
    while ((x & 1n) === 0n) {
      x >>= 1n
      const r = m & 7n
      if (r === 3n || r === 5n) result = -result
    }
    // Quadratic reciprocity: swapping flips the sign when both are 3 (mod 4).
    ;[x, m] = [m, x]
    if ((x & 3n) === 3n && (m & 3n) === 3n) result = -result
    x %= m
  }
  return m === 1n ? result : 0
}

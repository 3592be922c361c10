// Independent number theory for checking PrimeChecker: simple, slow, and sharing no code with it.

/** The seed of a file's random tests: PRIME_TEST_SEED when set, else a fresh one, printed to rerun. */
export function testSeed(file: string): number {
  const seed = Number(process.env.PRIME_TEST_SEED ?? Math.floor(Math.random() * 2 ** 32))
  console.log(`${file} random seed: ${seed} (rerun with PRIME_TEST_SEED=${seed})`)
  return seed
}

/** mulberry32: a tiny seeded PRNG so random tests reproduce from the printed seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
}

export function randomBits(next: () => number, bits: number): bigint {
  let x = 0n
  for (let i = 0; i < bits; i += 32) x = (x << 32n) | BigInt(next())
  return x & ((1n << BigInt(bits)) - 1n)
}

/** Right-to-left modular power. */
export function refModPow(base: bigint, exp: bigint, mod: bigint): bigint {
  let result = 1n
  let b = base % mod
  for (let e = exp; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % mod
    b = (b * b) % mod
  }
  return result
}

/**
 * Exact trial division below 2^32; above, trial division below 1000 then Miller-Rabin with 20 random bases.
 */
export function refIsProbablePrime(n: bigint, next: () => number): boolean {
  if (n < 2n) return false
  if (n < 2n ** 32n) {
    const m = Number(n)
    for (let d = 2; d * d <= m; d++) if (m % d === 0) return false
    return true
  }
  for (let d = 2n; d < 1000n; d += d === 2n ? 1n : 2n) if (n % d === 0n) return false
  let d = n - 1n
  let s = 0
  while (d % 2n === 0n) {
    d /= 2n
    s++
  }
  for (let i = 0; i < 20; i++) {
    const a = 2n + (randomBits(next, 64) % (n - 3n))
    let x = refModPow(a, d, n)
    if (x === 1n || x === n - 1n) continue
    let witness = true
    for (let r = 1; r < s && witness; r++) {
      x = (x * x) % n
      if (x === n - 1n) witness = false
    }
    if (witness) return false
  }
  return true
}

/** A random prime of `digits` decimal digits, checked by the reference test above. */
export function randomPrimeOfDigits(next: () => number, digits: number): bigint {
  const lo = 10n ** BigInt(digits - 1)
  let p = (lo + (randomBits(next, Math.ceil(digits * 3.33) + 8) % (9n * lo))) | 1n
  while (!refIsProbablePrime(p, next)) p += 2n
  return p
}

/** Reference sieve of Eratosthenes, written independently of the code under test. */
export function sieve(limit: number): Uint8Array {
  const isPrimeAt = new Uint8Array(limit).fill(1)
  isPrimeAt[0] = 0
  isPrimeAt[1] = 0
  for (let i = 2; i * i < limit; i++)
    if (isPrimeAt[i]) for (let j = i * i; j < limit; j += i) isPrimeAt[j] = 0
  return isPrimeAt
}

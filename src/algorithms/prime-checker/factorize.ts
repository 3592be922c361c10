import { bitLength, gcd, iroot } from './bigint-math.js'
import { isPrime } from './primality.js'
import { factorSmall, isPrimeSmall, SMALL_LIMIT } from './small.js'
import { SMALL_PRIMES } from './small-primes.js'

export interface Factorization {
  /** Prime factors ascending with multiplicity, then any parts left unsplit at the deadline, ascending. */
  factors: bigint[]
  /** False when the deadline passed with composite parts still in `factors`. */
  complete: boolean
}

export interface FactorizeOptions {
  /** A performance.now() time in ms after which no more splitting is attempted. */
  deadline: number
  /** Checked along with the deadline; when aborted, factorize throws signal.reason. */
  signal?: AbortSignal
  /** The caller has already found n composite, so its primality test (seconds at 4300 digits) is not repeated. */
  composite?: boolean
}

/** Pollard-Brent steps between two gcds, and between two deadline checks. */
const BATCH = 128

/** How many primes p = 1 (mod k) a number must pass as a k-th power residue before iroot is tried. */
const POWER_RESIDUE_TESTS = 8

/** Prime factorisation of n >= 2 with multiplicity; see Factorization for the order when incomplete. */
export function factorize(n: bigint, opts: FactorizeOptions): Factorization {
  if (n < 2n) throw new RangeError('factorize: n must be at least 2')
  if (n < BigInt(SMALL_LIMIT)) return { factors: factorSmall(Number(n)).map(BigInt), complete: true }

  const { primes, rest } = trialDivide(n)
  const composites: bigint[] = []
  const pending = rest > 1n ? [rest] : []
  for (let part = pending.pop(); part !== undefined; part = pending.pop()) {
    // Primality is always settled, even after the deadline, so that only true composites are left unsplit.
    if (!(opts.composite && part === n) && isPrime(part)) {
      primes.push(part)
      continue
    }
    const power = perfectPower(part)
    if (power) {
      for (let i = 0; i < power.exponent; i++) pending.push(power.root)
      continue
    }
    const divisor = splitByRho(part, opts)
    if (divisor === undefined) composites.push(part)
    else pending.push(divisor, part / divisor)
  }
  return {
    factors: [...primes.sort(ascending), ...composites.sort(ascending)],
    complete: composites.length === 0,
  }
}

function ascending(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Divides out the primes below 65536, stopping once p^2 exceeds the cofactor (which is then 1 or prime).
 * A composite cofactor is therefore left with prime factors above 2^16 only.
 */
function trialDivide(n: bigint): { primes: bigint[]; rest: bigint } {
  const primes: bigint[] = []
  let rest = n
  for (const p of SMALL_PRIMES) {
    const prime = BigInt(p)
    if (prime * prime > rest) break
    while (rest % prime === 0n) {
      primes.push(prime)
      rest /= prime
    }
  }
  return { primes, rest }
}

/**
 * Finds n = root^exponent for a prime exponent, where n has no prime factor below 2^16. Rho would need about
 * sqrt(p) steps to split p^k, as for any factor p; a root finds it at once, however large p is.
 */
function perfectPower(n: bigint): { root: bigint; exponent: number } | undefined {
  // Every prime factor has at least 17 bits, so a k-th power has more than 16k bits.
  const maxExponent = Math.floor(bitLength(n) / 16)
  for (let k = 2; k <= maxExponent; k++) {
    if (!isPrimeSmall(k) || !passesPowerResidueTests(n, k)) continue
    const root = iroot(n, k)
    if (root ** BigInt(k) === n) return { root, exponent: k }
  }
  return undefined
}

/**
 * A k-th power is a k-th power residue modulo every prime p; for p = 1 (mod k) only one residue in k is,
 * so a few such primes reject almost every non-power without computing a root.
 */
function passesPowerResidueTests(n: bigint, k: number): boolean {
  let tested = 0
  // p = 2jk + 1 is odd and 1 (mod k); p < 2^26 keeps products of residues exact in a double.
  for (let p = 2 * k + 1; tested < POWER_RESIDUE_TESTS && p < 2 ** 26; p += 2 * k) {
    if (!isPrimeSmall(p)) continue
    tested++
    const r = Number(n % BigInt(p))
    // r is a nonzero k-th power residue exactly when r^((p - 1) / k) = 1 (mod p).
    if (r !== 0 && powModSmall(r, (p - 1) / k, p) !== 1) return false
  }
  return true
}

/** base^exp mod p on Numbers, for p < 2^26. */
function powModSmall(base: number, exp: number, p: number): number {
  let result = 1
  let b = base % p
  for (let e = exp; e > 0; e = Math.floor(e / 2)) {
    if (e % 2 === 1) result = (result * b) % p
    b = (b * b) % p
  }
  return result
}

/** A nontrivial divisor of the composite n (odd, not a perfect power), or undefined at the deadline. */
function splitByRho(n: bigint, opts: FactorizeOptions): bigint | undefined {
  // A constant c fails only when both cycles close together (the gcd reaches n); another c is independent.
  for (let c = 1n; ; c++) {
    const divisor = pollardBrent(n, c, opts)
    if (divisor !== n) return divisor
  }
}

/**
 * Pollard's rho with Brent's cycle detection on x -> x^2 + c (mod n). Returns a divisor of n, n itself when
 * this c fails, or undefined when the deadline passes.
 */
function pollardBrent(n: bigint, c: bigint, opts: FactorizeOptions): bigint | undefined {
  const f = (x: bigint): bigint => (x * x + c) % n
  let y = 2n
  let x = y
  let ys = y
  let product = 1n
  let g = 1n
  // Brent: x stays at the start of each stretch of r steps while y walks it; r doubles per stretch.
  for (let r = 1; g === 1n; r *= 2) {
    x = y
    for (let done = 0; done < r; done += BATCH) {
      if (timeIsUp(opts)) return undefined
      for (let i = Math.min(BATCH, r - done); i > 0; i--) y = f(y)
    }
    for (let done = 0; done < r && g === 1n; done += BATCH) {
      if (timeIsUp(opts)) return undefined
      ys = y
      // One gcd per batch: the product of the differences shares any factor that a single one would.
      for (let i = Math.min(BATCH, r - done); i > 0; i--) {
        y = f(y)
        product = (product * (x > y ? x - y : y - x)) % n
      }
      g = gcd(product, n)
    }
  }
  if (g !== n) return g
  // The batch product reached 0 mod n; replay the batch one step at a time to catch the factor before that.
  do {
    ys = f(ys)
    g = gcd(x > ys ? x - ys : ys - x, n)
  } while (g === 1n)
  return g
}

function timeIsUp(opts: FactorizeOptions): boolean {
  if (opts.signal?.aborted) throw opts.signal.reason
  return performance.now() >= opts.deadline
}

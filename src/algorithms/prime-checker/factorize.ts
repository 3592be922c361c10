import { bitLength, iroot } from './bigint-math.js'
import { Budget, type ProgressReporter } from './budget.js'
import { ecm } from './ecm.js'
import { LIMIT_64, limbCount, MAX_LIMBS } from './kernel.js'
import { isPrime } from './primality.js'
import { quadraticSieve } from './quadratic-sieve.js'
import { rhoBig, splitRho64 } from './rho.js'
import { factorSmall, isPrimeSmall, LIMIT_32 } from './small.js'
import { trialDivide } from './trial-division.js'

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
  /**
   * The caller has already found n composite, so its primality test (seconds at 4300 digits) is not repeated.
   */
  composite?: boolean
  /** Told of the sieve's relations and ECM's curves as they come (messages name the step). */
  progress?: ProgressReporter
}

/** How many primes p = 1 (mod k) a number must pass as a k-th power residue before iroot is tried. */
const POWER_RESIDUE_TESTS = 8

/**
 * Rho steps before ECM takes over above 2^64: Brent's rounds up to r = 2048, enough for factors of about 6 to
 * 7 digits. From 7 to 8 digits ECM is as fast or faster (docs/benchmarks/prime-checker.md, "Figures moved
 * out of code comments").
 */
const RHO_STEPS = 8_000

/**
 * Parts up to this many digits go to the quadratic sieve, which needs no luck with curves: on balanced
 * semiprimes it beats rho and ECM from 20 digits (just above 2^64) on (docs/benchmarks/prime-checker.md),
 * and its kN must fit the kernel's QS_MAX_KN_LIMBS limbs (256 bits, 77 digits, with the multiplier).
 */
const QS_MAX_DIGITS = 75

/**
 * Rho steps before the quadratic sieve: factors of up to about 6 digits in a fraction of a millisecond,
 * where the sieve would take its full time whatever the factors' sizes.
 */
const QS_RHO_STEPS = 2_000

/**
 * From this many digits ECM gets a tenth of qsExpectedMs first: the sieve takes as long for a part with a
 * 12-digit factor as for a balanced one, and ECM's first curves find such factors in a few ms.
 */
const QS_ECM_FROM_DIGITS = 33

/**
 * The scale of ECM's run before the sieve: 7 ms at 30 digits, x2.6 per 5 digits, which is the sieve's time
 * to about 40 digits and falls below it after (half of it at 50 digits, a seventh at 70:
 * docs/benchmarks/prime-checker.md), so that ECM's share, spent in vain on balanced parts, shrinks as the
 * sieve's lead on them grows.
 */
function qsExpectedMs(digits: number): number {
  return 7 * 2.6 ** ((digits - 30) / 5)
}

/** Prime factorisation of n >= 2 with multiplicity; see Factorization for the order when incomplete. */
export function factorize(n: bigint, opts: FactorizeOptions): Factorization {
  if (n < 2n) throw new RangeError('factorize: n must be at least 2')
  if (n < LIMIT_32) return { factors: factorSmall(Number(n)).map(BigInt), complete: true }

  const budget = new Budget(opts.deadline, opts.signal, opts.progress)
  const { primes, rest } = trialDivide(n)
  const composites: bigint[] = []
  const pending = rest > 1n ? [rest] : []
  for (let part = pending.pop(); part !== undefined; part = pending.pop()) {
    // Primality is always settled, even after the deadline, so that only true composites are left unsplit.
    // Every part is free of primes below 2^16, so one below 2^32 is prime: isPrime would prove it again by
    // trial division, as it did for the two factors of every 64-bit semiprime.
    if (!(opts.composite && part === n) && (part < LIMIT_32 || isPrime(part))) {
      primes.push(part)
      continue
    }
    const power = perfectPower(part)
    if (power) {
      for (let i = 0; i < power.exponent; i++) pending.push(power.root)
      continue
    }
    const divisor = split(part, budget)
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

/**
 * A nontrivial divisor of the composite n (no prime factor below 2^16, not a perfect power), or undefined at
 * the deadline: below 2^64 p - 1, a few small ECM curves and rho (splitRho64); up to QS_MAX_DIGITS digits, a
 * little rho and then the quadratic sieve; above, rho for small factors and then ECM, up to 32768 bits.
 */
function split(n: bigint, budget: Budget): bigint | undefined {
  if (n < LIMIT_64) return splitRho64(n, budget)
  const digits = n.toString().length
  if (digits <= QS_MAX_DIGITS) {
    const found =
      rhoBig(n, QS_RHO_STEPS, budget) ??
      (digits >= QS_ECM_FROM_DIGITS ? ecm(n, budget.within(qsExpectedMs(digits) / 10)) : undefined)
    return found ?? (budget.timeIsUp() ? undefined : quadraticSieve(n, budget))
  }
  // Rho runs on montn's residues of at most MAX_LIMBS 32-bit limbs, ECM on montn's or (from 17 limbs) on
  // mont28's, whose MAX_LIMBS28 hold as many bits. A larger part (ALGOSERVE_MAX_DIGITS
  // raised past about 9,800 digits) is left unsplit: BigInt rho at that size would find little within a
  // budget.
  if (limbCount(n) > MAX_LIMBS) return undefined
  return rhoBig(n, RHO_STEPS, budget) ?? (budget.timeIsUp() ? undefined : ecm(n, budget))
}

// The self-initialising quadratic sieve (Alford and Pomerance 1995; Contini's thesis, 1997; Crandall and
// Pomerance, Prime Numbers, section 6.1): polynomials g(x) = A x^2 + 2 B x + C with A a product of s
// factor-base primes, so that (A x + B)^2 - kN = A g(x) and each A serves 2^(s-1) values of B switched by a
// Gray code at the cost of one addition per prime. Relations have one large prime allowed (Lenstra and
// Manasse's partial relations), pairs sharing it are combined, and Gaussian elimination over GF(2) gives the
// congruences of squares. Every loop over the factor base runs in the kernel (wasm/prime/qs.ts): the factor
// base, each polynomial's roots, the sieve, the trial division of candidates (whole while g(x) fits 64 bits,
// to about 29 digits) and the elimination. Here, V8 spent more CPU time optimising them, on its compiler
// threads, than a warm 20-digit factorisation takes; what is left here works per polynomial or per relation,
// with BigInt for A, B, C, y and the final square roots.
import { bitLength, gcd } from './bigint-math.js'
import type { Budget } from './budget.js'
import {
  ensureBytes,
  kernel,
  limbCount,
  QS_MAX_A_PRIMES,
  QS_MAX_CANDIDATES,
  QS_MAX_KN_LIMBS,
  QS_MAX_PRIMES,
  QS_MAX_WIDTH,
  writeLimbs,
} from './kernel.js'
import { SMALL_PRIMES } from './small-primes.js'

/** Relations gathered beyond the factor base's size, so that elimination leaves that many dependencies. */
const EXTRA_RELATIONS = 24

/** Partial relations keep a cofactor up to this many times the largest factor-base prime. */
const LARGE_PRIME_FACTOR = 64

/**
 * The sieve reports x where the logs add up to log2 |g(x)| less this many times log2 of the largest prime:
 * room for a large prime, the unsieved small primes and rounding (1.8 beat 1.6 and 2.0 at 30 digits).
 */
const THRESHOLD_LOGS = 1.8

/** Primes below this are not sieved: they hit often but add little; the threshold allows for them. */
const SMALL_SIEVE_BOUND = 30

/** Candidate multipliers k for Knuth-Schroeppel: squarefree and small, so kN grows by a few bits at most. */
const MULTIPLIERS = [1, 3, 5, 7, 11, 13, 15, 17, 19, 21, 23, 29, 31, 33, 35, 37, 39, 41, 43, 47, 51, 53, 55]

interface Params {
  /** Factor-base size, including 2. */
  primes: number
  /** Half-width: x runs over [-M, M). A multiple of 4, so that the kernel scans the sieve 8 bytes at a time. */
  halfWidth: number
}

/** [digits of n, factor-base size, half-width], interpolated in between; tuned by measurement (BENCHMARKS.md). */
const PARAMS: [number, number, number][] = [
  [18, 50, 8192],
  [24, 100, 8192],
  [30, 220, 8192],
  [36, 380, 12288],
  [42, 650, 16384],
  [48, 1000, 24576],
  [54, 1500, 32768],
]

function params(digits: number): Params {
  const first = PARAMS[0] as [number, number, number]
  const last = PARAMS[PARAMS.length - 1] as [number, number, number]
  if (digits <= first[0]) return { primes: first[1], halfWidth: first[2] }
  if (digits >= last[0]) return { primes: last[1], halfWidth: last[2] }
  for (let i = 1; i < PARAMS.length; i++) {
    const [d1, f1, m1] = PARAMS[i] as [number, number, number]
    if (digits > d1) continue
    const [d0, f0] = PARAMS[i - 1] as [number, number, number]
    const t = (digits - d0) / (d1 - d0)
    return { primes: Math.round(f0 + t * (f1 - f0)), halfWidth: m1 }
  }
  return { primes: last[1], halfWidth: last[2] }
}

/** A relation Y^2 = (-1)^neg * prod primes[i] (mod n) times large^2, with the indices listed with multiplicity. */
interface Relation {
  y: bigint
  neg: boolean
  indices: number[]
  /** The large primes whose squares the relation carries: their product goes into the square root. */
  large: bigint
}

/**
 * A nontrivial divisor of the odd composite n (no prime factor below 2^16, not a perfect power), or undefined
 * at the budget's deadline. Throws the budget's abort reason when aborted.
 */
export function quadraticSieve(n: bigint, budget: Budget): bigint | undefined {
  const digits = n.toString().length
  const { primes, halfWidth: half } = params(digits)
  // The table stays within the kernel's static arrays; the clamps say so where it is read.
  const size = Math.min(primes, QS_MAX_PRIMES)
  const halfWidth = Math.min(half, QS_MAX_WIDTH / 2)
  const k = multiplier(n)
  const kn = BigInt(k) * n
  const fb = factorBase(n, kn, size)
  if (typeof fb === 'bigint') return fb
  const sieve = new Sieve(n, kn, fb, halfWidth)
  // solve() may grow the kernel's memory, detaching fb's views of it.
  const basePrimes = fb.primes.slice()
  const relations: Relation[] = []
  const partials = new Map<number, Relation>()
  // Polynomials whose A share primes overlap in a few y, and y and -y give the same relation: a repeated full
  // relation, or a partial met twice and combined with itself, would be a dependency of its own, always trivial.
  const seen = new Set<bigint>()
  let wanted = basePrimes.length + EXTRA_RELATIONS
  for (;;) {
    while (relations.length < wanted) {
      if (budget.timeIsUp()) return undefined
      sieve.nextPolynomial()
      for (const r of sieve.collect()) {
        const y = 2n * r.y < n ? r.y : n - r.y
        if (seen.has(y)) continue
        seen.add(y)
        if (r.large === 1n) {
          relations.push(r)
          continue
        }
        const large = Number(r.large)
        const mate = partials.get(large)
        if (mate === undefined) partials.set(large, r)
        else relations.push(combine(mate, r, n))
      }
    }
    const found = solve(n, basePrimes, relations, budget)
    if (found === undefined) return undefined
    if (found !== 1n) return found
    sieve.attach()
    // Every dependency gave a trivial split (each does with probability at most 1/2): gather a few more.
    wanted += EXTRA_RELATIONS
  }
}

/** Two partial relations with the same large prime L make one whose product carries L^2. */
function combine(a: Relation, b: Relation, n: bigint): Relation {
  return {
    y: (a.y * b.y) % n,
    neg: a.neg !== b.neg,
    indices: a.indices.concat(b.indices),
    large: a.large,
  }
}

/** How many odd primes (3 to 997) rank the multipliers: past 1000 they change the score by little. */
const RANKING_COUNT = 167

/** Per multiplier k and ranking prime p, (k / p) as -1 or 1, or 0 for p | k; and p's gains: made on first use. */
interface Ranking {
  symbols: Int8Array
  /** 2 log(p) / (p - 1): p | Q(x) for two x in p when (kN / p) = 1. */
  residueGain: Float64Array
  /** log(p) / p: p | Q(x) for one x in p when p | k. */
  divisorGain: Float64Array
}

let ranking: Ranking | undefined

function rankingTables(): Ranking {
  if (ranking) return ranking
  const primes = SMALL_PRIMES.subarray(1, 1 + RANKING_COUNT)
  const symbols = new Int8Array(MULTIPLIERS.length * RANKING_COUNT)
  MULTIPLIERS.forEach((k, m) => {
    primes.forEach((p, i) => {
      symbols[m * RANKING_COUNT + i] = k % p === 0 ? 0 : powMod(k, (p - 1) / 2, p) === 1 ? 1 : -1
    })
  })
  const residueGain = Float64Array.from(primes, (p) => (2 * Math.log(p)) / (p - 1))
  const divisorGain = Float64Array.from(primes, (p) => Math.log(p) / p)
  ranking = { symbols, residueGain, divisorGain }
  return ranking
}

/**
 * The Knuth-Schroeppel multiplier (Silverman 1987, section 5): k maximising the expected contribution of the
 * small primes to Q(x) = (Ax + B)^2 - kN, less half the log of k for the larger values.
 */
function multiplier(n: bigint): number {
  const { symbols, residueGain, divisorGain } = rankingTables()
  const n8 = Number(n % 8n)
  // (kN / p) = (k / p) (N / p): the kernel gives N's symbols, the table the multipliers'.
  const limbs = limbCount(n)
  writeLimbs(kernel.qsKn(), n, limbs)
  kernel.qsLegendre(limbs, RANKING_COUNT)
  const nSymbols = new Int32Array(kernel.memory.buffer, kernel.qsHits(), RANKING_COUNT)
  let best = 1
  let bestScore = Number.NEGATIVE_INFINITY
  for (let m = 0; m < MULTIPLIERS.length; m++) {
    const k = MULTIPLIERS[m] as number
    // kN = 1 (mod 8) makes 8 divide Q(x) for half the x, 5 (mod 8) gives 4, otherwise only 2.
    const kn8 = (k * n8) % 8
    let score = -0.5 * Math.log(k) + (kn8 === 1 ? 2 : kn8 === 5 ? 1 : 0.5) * Math.LN2
    for (let i = 0; i < RANKING_COUNT; i++) {
      const symbol = symbols[m * RANKING_COUNT + i] as number
      if (symbol === 0) score += divisorGain[i] as number
      else if (symbol === nSymbols[i]) score += residueGain[i] as number
    }
    if (score > bestScore) {
      bestScore = score
      best = k
    }
  }
  return best
}

interface FactorBase {
  /** 2, then the odd primes p with kN a square mod p (including those dividing k). */
  primes: Int32Array
  /** A square root of kN mod p (0 for 2 and the primes dividing k). */
  roots: Int32Array
}

/**
 * The factor base of up to `size` primes for kN, made by the kernel in its static arrays, where the sieve
 * reads it; or a prime of it that divides n (outside split()'s inputs).
 */
function factorBase(n: bigint, kn: bigint, size: number): FactorBase | bigint {
  const limbs = limbCount(kn)
  if (limbs > QS_MAX_KN_LIMBS)
    throw new RangeError(`quadratic sieve: kN of ${limbs} limbs exceeds ${QS_MAX_KN_LIMBS}`)
  writeLimbs(kernel.qsKn(), kn, limbs)
  const count = kernel.qsFactorBase(limbs, size)
  const memory = kernel.memory.buffer
  const primes = new Int32Array(memory, kernel.qsPrimes(), count)
  const roots = new Int32Array(memory, kernel.qsSqrts(), count)
  // A root of 0 marks p | kN: p divides k, or n itself.
  for (let i = 1; i < count; i++) {
    const p = BigInt(primes[i] as number)
    if (roots[i] === 0 && n % p === 0n) return p
  }
  return { primes, roots }
}

/** The sieve over one polynomial at a time, with the polynomial's state and its roots mod each prime. */
class Sieve {
  // Views of the kernel's static arrays, where its loops read and write them; attach() makes them.
  private primes!: Int32Array
  private sqrts!: Int32Array
  private readonly size: number
  private readonly width: number
  private candidates!: Int32Array
  private hitList!: Int32Array
  /** The first factor-base index sieved. */
  private readonly firstSieved: number
  /** Sieve bytes start at this value, so that a byte at 128 or above has passed the threshold. */
  private readonly init: number
  private readonly largeBound: number
  private readonly targetA: number
  private readonly usedA = new Set<bigint>()
  /** Indices of the primes whose product is A, and the per-A state. */
  private aIndices: number[] = []
  private a = 0n
  private bTerms: bigint[] = []
  private b = 0n
  private c = 0n
  /** Which B of the current A is in use; 2^(s-1) of them. */
  private bIndex = 0
  /** For each prime q_l of A, the sieve position mod q_l where q_l divides g(x) = 2 B x + C (mod q_l). */
  private aRoots: number[] = []
  /** Scratch list of the factor-base indices dividing a candidate. */
  private readonly hits: number[] = []
  /** The sieve positions x + M where p divides g(x), two per prime. */
  private root1!: Int32Array
  private root2!: Int32Array
  /** The primes of A and the gamma_l of B's terms, where the kernel's qsNewA reads them. */
  private aPrimes!: Int32Array
  private gammas!: Int32Array
  private aIndexList!: Int32Array
  /** Whether |g(x)| < 2^63 over the sieve for the current polynomial: the kernel then trial-divides it alone. */
  private fits = false
  private random = 0x9e3779b9

  constructor(
    private readonly n: bigint,
    private readonly kn: bigint,
    fb: FactorBase,
    halfWidth: number,
  ) {
    this.size = fb.primes.length
    this.width = 2 * halfWidth
    this.attach()
    let first = 1
    while (first < this.size && (this.primes[first] as number) < SMALL_SIEVE_BOUND) first++
    this.firstSieved = first
    const pMax = this.primes[this.size - 1] as number
    // A cofactor below pMax^2 with no factor-base prime is prime.
    this.largeBound = Math.min(LARGE_PRIME_FACTOR * pMax, pMax * pMax - 1)
    // |g(x)| <= M sqrt(kN / 2) over the interval.
    const logG = bitLength(kn) / 2 - 0.5 + Math.log2(halfWidth)
    const threshold = Math.round(logG - THRESHOLD_LOGS * Math.log2(pMax))
    this.init = 128 - threshold
    this.targetA = Math.sqrt(2 * Number(kn)) / halfWidth
  }

  /** (Re)makes the views of the kernel's memory: growing it, as solve() may, detaches the old ones. */
  attach(): void {
    const memory = kernel.memory.buffer
    this.primes = new Int32Array(memory, kernel.qsPrimes(), this.size)
    this.sqrts = new Int32Array(memory, kernel.qsSqrts(), this.size)
    this.root1 = new Int32Array(memory, kernel.qsRoot1(), this.size)
    this.root2 = new Int32Array(memory, kernel.qsRoot2(), this.size)
    this.candidates = new Int32Array(memory, kernel.qsCandidates(), QS_MAX_CANDIDATES)
    this.hitList = new Int32Array(memory, kernel.qsHits(), QS_MAX_PRIMES)
    this.aPrimes = new Int32Array(memory, kernel.qsAPrimes(), QS_MAX_A_PRIMES)
    this.gammas = new Int32Array(memory, kernel.qsGammas(), QS_MAX_A_PRIMES)
    this.aIndexList = new Int32Array(memory, kernel.qsAIndices(), QS_MAX_A_PRIMES)
  }

  /** Moves to the next B of the current A, or to a new A once its 2^(s-1) values are used. */
  nextPolynomial(): void {
    const s = this.aIndices.length
    this.bIndex++
    if (s === 0 || this.bIndex >= 1 << (s - 1)) {
      this.newA()
      return
    }
    // Gray code (Contini, section 2.4): B_(i+1) = B_i + 2 (-1)^ceil(i / 2^(v+1)) B_v, v the trailing zeros of i.
    const i = this.bIndex
    const v = 31 - Math.clz32(i & -i)
    const plus = Math.ceil(i / 2 ** (v + 1)) % 2 === 0
    const term = this.bTerms[v] as bigint
    this.b += plus ? 2n * term : -2n * term
    this.c = (this.b * this.b - this.kn) / this.a
    this.findARoots()
    kernel.qsNextB(this.size, v, plus)
    this.setPolynomial()
    this.markARoots()
  }

  /** A new A = q_1 ... q_s near sqrt(2 kN) / M, its first B, and every prime's roots and deltas. */
  private newA(): void {
    const { primes, size, sqrts } = this
    const indices = this.chooseA()
    this.aIndices = indices
    this.bIndex = 0
    const qs = indices.map((j) => primes[j] as number)
    let a = 1n
    for (const q of qs) a *= BigInt(q)
    this.a = a
    // B_l = (A / q_l) gamma_l with gamma_l = t_l (A / q_l)^-1 mod q_l, so that B = sum B_l has B^2 = kN (mod A).
    const gammas = qs.map((q, l) => {
      const gamma =
        ((sqrts[indices[l] as number] as number) * invMod(Number((a / BigInt(q)) % BigInt(q)), q)) % q
      return gamma > q / 2 ? q - gamma : gamma
    })
    this.bTerms = qs.map((q, l) => (a / BigInt(q)) * BigInt(gammas[l] as number))
    this.b = this.bTerms.reduce((x, y) => x + y, 0n)
    this.c = (this.b * this.b - this.kn) / a
    this.findARoots()
    this.aPrimes.set(qs)
    this.gammas.set(gammas)
    this.aIndexList.set(indices)
    this.setPolynomial()
    kernel.qsNewA(size, qs.length, this.width / 2)
    this.markARoots()
  }

  /**
   * Gives the kernel g's coefficients (mod 2^64, as the JS API converts them) and decides whether g(x) fits a
   * 64-bit word: g is a parabola, largest in size at the ends of the interval or at its vertex, -kN / A.
   */
  private setPolynomial(): void {
    const { a, b, c } = this
    const m = BigInt(this.width / 2)
    const limit = 1n << 62n
    const end = a * m * m + c
    const fits = (g: bigint) => g < limit && g > -limit
    this.fits = fits(end + 2n * b * m) && fits(end - 2n * b * m) && this.kn / a < limit
    if (this.fits) kernel.qsSetPolynomial(a, b, c, this.aIndices.length)
  }

  /** A's primes get roots no sieve position mod q equals: relationAt finds them through aRoots instead. */
  private markARoots(): void {
    for (const i of this.aIndices) {
      this.root1[i] = -1
      this.root2[i] = -1
    }
  }

  /** g(x) = 2 B x + C (mod q) for q dividing A: one root, x = -C (2 B)^-1, as a sieve position. */
  private findARoots(): void {
    const half = this.width / 2
    this.aRoots = this.aIndices.map((i) => {
      const q = this.primes[i] as number
      const bigQ = BigInt(q)
      const twoB = Number((((2n * this.b) % bigQ) + bigQ) % bigQ)
      const c = Number(((this.c % bigQ) + bigQ) % bigQ)
      return ((((q - c) * invMod(twoB, q)) % q) + half) % q
    })
  }

  /** Indices of s factor-base primes whose product is near the target, a product not used before. */
  private chooseA(): number[] {
    const { primes, size, targetA } = this
    const logTarget = Math.log(targetA)
    // Primes near a quarter of the largest leave many products to draw from, each giving 2^(s-1) polynomials,
    // and lose little yield by not being sieved. Fewer, larger ones if they would fall among the unsieved
    // primes, but never above half the largest, where too few products come near the target.
    const logSmallest = Math.log(2 * (primes[this.firstSieved] as number))
    const logHalfMax = Math.log((primes[size - 1] as number) / 2)
    let s = Math.max(2, Math.round(logTarget / Math.log((primes[size - 1] as number) / 4)))
    while (s > 2 && logTarget / s < logSmallest && logTarget / (s - 1) <= logHalfMax) s--
    while (logTarget / s > logHalfMax && s < QS_MAX_A_PRIMES) s++
    for (let tries = 1; ; tries++) {
      // Failed draws widen the window; many failures mean the products are running out, and one more prime
      // makes many more of them. Past that, repeats are allowed: unique() drops the relations they repeat.
      if (tries % 200 === 0 && s < QS_MAX_A_PRIMES && logTarget / (s + 1) >= logSmallest) s++
      if (tries % 20_000 === 0) this.usedA.clear()
      const q = Math.exp(logTarget / s)
      const spread = 2 + tries / 50
      let lo = this.firstAtLeast(q / spread)
      let hi = Math.min(size - 1, this.firstAtLeast(q * spread))
      if (hi - lo < s + 2) {
        lo = this.firstSieved
        hi = size - 1
      }
      const chosen: number[] = []
      let product = 1
      for (let l = 0; l < s - 1; l++) {
        let j: number
        do j = lo + (this.nextRandom() % (hi - lo + 1))
        while (chosen.includes(j) || this.dividesK(j))
        chosen.push(j)
        product *= primes[j] as number
      }
      const last = this.nearest(targetA / product, chosen)
      if (last < 0) continue
      chosen.push(last)
      let a = 1n
      for (const j of chosen) a *= BigInt(primes[j] as number)
      if (this.usedA.has(a)) continue
      this.usedA.add(a)
      return chosen
    }
  }

  /** The first sieved factor-base index whose prime is at least `value` (the last index if none is). */
  private firstAtLeast(value: number): number {
    const { primes } = this
    let lo = this.firstSieved
    let hi = this.size - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((primes[mid] as number) < value) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** The sieved factor-base prime nearest to `value` not in `taken`, or -1. */
  private nearest(value: number, taken: number[]): number {
    const { primes, size } = this
    const lo = this.firstAtLeast(value)
    let best = -1
    let bestGap = Number.POSITIVE_INFINITY
    for (let j = Math.max(this.firstSieved, lo - 2); j <= Math.min(size - 1, lo + 2); j++) {
      const gap = Math.abs(Math.log((primes[j] as number) / value))
      if (!taken.includes(j) && !this.dividesK(j) && gap < bestGap) {
        best = j
        bestGap = gap
      }
    }
    return bestGap < 0.7 ? best : -1
  }

  /** A prime of k has no square root of kN to build B from (B^2 - kN would not be divisible by A). */
  private dividesK(i: number): boolean {
    return this.sqrts[i] === 0
  }

  private nextRandom(): number {
    // xorshift32: reproducible polynomials from one call to the next.
    let x = this.random
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    this.random = x >>> 0
    return this.random
  }

  /** Sieves the current polynomial and returns the relations (full, or with one large prime) it yields. */
  collect(): Relation[] {
    const count = kernel.qsSieve(this.width, this.firstSieved, this.size, this.init)
    const found: Relation[] = []
    for (let c = 0; c < count; c++) {
      const r = this.relationAt(this.candidates[c] as number)
      if (r !== undefined) found.push(r)
    }
    return found
  }

  /** Trial-divides g(x) at sieve position j by the primes whose roots say they divide it. */
  private relationAt(j: number): Relation | undefined {
    return this.fits ? this.relationInKernel(j) : this.relationOnBigInts(j)
  }

  /** relationAt for a g(x) that fits a word: the kernel finds its factors, BigInt is only for y. */
  private relationInKernel(j: number): Relation | undefined {
    const count = kernel.qsRelation(j, this.size, this.width / 2, this.largeBound)
    if (count < 0) return undefined
    const indices = this.aIndices.slice()
    for (let h = 0; h < count; h++) indices.push(this.hitList[h] as number)
    const y = this.a * BigInt(j - this.width / 2) + this.b
    return {
      y: y < 0n ? y + this.n : y,
      neg: kernel.qsNegative() !== 0,
      indices,
      large: BigInt(kernel.qsCofactor()),
    }
  }

  private relationOnBigInts(j: number): Relation | undefined {
    const { primes, size, hits } = this
    // The kernel lists the primes whose roots say they divide g(x); the BigInt side divides by their products.
    hits.length = 0
    const count = kernel.qsDividing(j, size)
    for (let h = 0; h < count; h++) hits.push(this.hitList[h] as number)
    this.aIndices.forEach((i, l) => {
      if (j % (primes[i] as number) === this.aRoots[l]) hits.push(i)
    })
    const x = BigInt(j - this.width / 2)
    const y = this.a * x + this.b
    let g = (y + this.b) * x + this.c
    const neg = g < 0n
    if (neg) g = -g
    if (g === 0n) return undefined
    // A g(x) = y^2 - kN, so A's primes belong to the relation whatever g's factors are.
    const indices = [...this.aIndices]
    let twos = 0
    for (let low = Number(g & 0xffffffffn); (low & 1) === 0; low = Number(g & 0xffffffffn)) {
      // Math.clz32(low & -low) counts from the top: 31 minus it is the trailing zeros (32 when low is 0).
      const shift = low === 0 ? 32 : 31 - Math.clz32(low & -low)
      g >>= BigInt(shift)
      twos += shift
    }
    for (let t = 0; t < twos; t++) indices.push(0)
    let chunk = 1
    for (const i of hits) {
      const p = primes[i] as number
      indices.push(i)
      if (chunk * p >= 2 ** 53) {
        g /= BigInt(chunk)
        chunk = 1
      }
      chunk *= p
    }
    g /= BigInt(chunk)
    // A cofactor past 2^53 would stay past the large-prime bound but for high powers of the hit primes.
    if (g >= 2n ** 53n) return undefined
    let small = Number(g)
    for (const i of hits) {
      const p = primes[i] as number
      while (small % p === 0) {
        small /= p
        indices.push(i)
      }
    }
    if (small > this.largeBound) return undefined
    return { y: y < 0n ? y + this.n : y, neg, indices, large: BigInt(small) }
  }
}

/** Columns the kernel eliminates between two looks at the budget. */
const ELIMINATION_COLUMNS = 64

/**
 * Gaussian elimination over GF(2) on the relations' exponent vectors (sign, then one bit per prime), with
 * each row's history of combined relations; each zero row is a dependency, tried for a nontrivial gcd.
 * Returns the divisor, 1n when every dependency was trivial, or undefined at the deadline.
 */
function solve(n: bigint, primes: Int32Array, relations: Relation[], budget: Budget): bigint | undefined {
  const columns = primes.length + 1
  const rowWords = (columns + 31) >>> 5
  const rows = relations.length
  const historyWords = (rows + 31) >>> 5
  const stride = rowWords + historyWords
  // The matrix lives in the kernel's memory from modulusPtr() on, free while the sieve runs (rho and ECM use it
  // between calls), with a byte per row after it for the pivots.
  const base = kernel.modulusPtr()
  const matrixBytes = rows * stride * 4
  ensureBytes(base + matrixBytes + rows)
  const matrix = new Uint32Array(kernel.memory.buffer, base, rows * stride).fill(0)
  const pivoted = new Uint8Array(kernel.memory.buffer, base + matrixBytes, rows).fill(0)
  relations.forEach((r, row) => {
    const start = row * stride
    if (r.neg) matrix[start] = 1
    for (const i of r.indices) {
      const c = i + 1
      matrix[start + (c >>> 5)] = (matrix[start + (c >>> 5)] as number) ^ (1 << (c & 31))
    }
    matrix[start + rowWords + (row >>> 5)] = 1 << (row & 31)
  })
  for (let c = 0; c < columns; c += ELIMINATION_COLUMNS) {
    if (budget.timeIsUp()) return undefined
    kernel.qsEliminate(base, rows, stride, c, Math.min(columns, c + ELIMINATION_COLUMNS), base + matrixBytes)
  }
  for (let r = 0; r < rows; r++) {
    if (pivoted[r]) continue
    if (budget.timeIsUp()) return undefined
    const history = matrix.subarray(r * stride + rowWords, (r + 1) * stride)
    const d = squareRoot(n, primes, relations, history)
    if (d !== 1n && d !== n) return d
  }
  return 1n
}

/** gcd(X - Z, n) for X the product of the dependency's y and Z the square root of the product of its sides. */
function squareRoot(n: bigint, primes: Int32Array, relations: Relation[], history: Uint32Array): bigint {
  const exponents = new Int32Array(primes.length)
  let x = 1n
  let z = 1n
  for (let row = 0; row < relations.length; row++) {
    if (((history[row >>> 5] as number) & (1 << (row & 31))) === 0) continue
    const r = relations[row] as Relation
    x = (x * r.y) % n
    z = (z * r.large) % n
    for (const i of r.indices) exponents[i] = (exponents[i] as number) + 1
  }
  // Primes are below 2^16: products of up to 2^37 stay exact on a double before one BigInt multiplication.
  let chunk = 1
  for (let i = 0; i < primes.length; i++) {
    const p = primes[i] as number
    for (let e = (exponents[i] as number) >> 1; e > 0; e--) {
      chunk *= p
      if (chunk >= 2 ** 37) {
        z = (z * BigInt(chunk)) % n
        chunk = 1
      }
    }
  }
  z = (z * BigInt(chunk)) % n
  return gcd(x - z, n)
}

/** base^exp mod p on doubles, for p < 2^16. */
function powMod(base: number, exp: number, p: number): number {
  let result = 1
  let b = base % p
  for (let e = exp; e > 0; e = Math.floor(e / 2)) {
    if (e & 1) result = (result * b) % p
    b = (b * b) % p
  }
  return result
}

/** a^-1 mod m for gcd(a, m) = 1, by the extended Euclidean algorithm on doubles. */
function invMod(a: number, m: number): number {
  let r0 = a % m
  let r1 = m
  let s0 = 1
  let s1 = 0
  while (r1 !== 0) {
    const q = Math.floor(r0 / r1)
    const r2 = r0 - q * r1
    r0 = r1
    r1 = r2
    const s2 = s0 - q * s1
    s0 = s1
    s1 = s2
  }
  return ((s0 % m) + m) % m
}

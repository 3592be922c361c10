// The sieve of the self-initialising quadratic sieve (Alford and Pomerance 1995; Contini's thesis, 1997;
// Crandall and Pomerance, Prime Numbers, section 6.1): polynomials g(x) = A x^2 + 2 B x + C with A a product
// of s factor-base primes, so that (A x + B)^2 - kN = A g(x) and each A serves 2^(s-1) values of B switched
// by a Gray code at the cost of one addition per prime. Every loop over the factor base runs in the kernel
// (wasm/prime/qs.ts): the factor base, each polynomial's roots, the sieve, the search for the primes
// dividing a candidate (and its whole trial division while g(x) fits 64 bits, to about 29 digits). Here, V8
// spent more CPU time optimising them, on its compiler threads, than a warm 20-digit factorisation takes;
// what is left here works per polynomial or per relation, with BigInt for A, B, C and y. The relations it
// yields, full or partial, go to quadratic-sieve.ts, which keeps the partials in qs-partials.ts.
import { bitLength } from './bigint-math.js'
import {
  kernel,
  limbCount,
  QS_MAX_A_PRIMES,
  QS_MAX_CANDIDATES,
  QS_MAX_KN_LIMBS,
  QS_MAX_PRIMES,
  writeLimbs,
} from './kernel.js'

/** The sieve's parameters for the size of n (quadratic-sieve.ts has them by digits). */
export interface Params {
  /** Factor-base size, including 2. */
  primes: number
  /**
   * Half-width: x runs over [-M, M). A multiple of 8, so that the kernel scans the sieve 16 bytes at a time.
   */
  halfWidth: number
  /** Single large primes go up to this many times the largest factor-base prime. */
  largeFactor: number
  /** Cofactors up to this power of the single bound are split into two large primes (0: no second prime). */
  doubleExponent: number
  /**
   * The sieve reports x where the logs add up to log2 |g(x)| less this many times log2 of the largest prime:
   * room for the large primes, the unsieved small primes and rounding.
   */
  thresholdLogs: number
  /** Primes below this are not sieved: they hit often but add little; the threshold allows for them. */
  smallBound: number
}

/**
 * A relation Y^2 = (-1)^neg * prod primes[i] * prod large (mod n), with the indices and large primes listed
 * with multiplicity. In the relations given to elimination each large prime appears an even number of times.
 */
export interface Relation {
  y: bigint
  neg: boolean
  indices: number[]
  large: number[]
}

export interface FactorBase {
  /** 2, then the odd primes p with kN a square mod p (including those dividing k). */
  primes: Int32Array
  /** A square root of kN mod p (0 for 2 and the primes dividing k). */
  roots: Int32Array
}

/**
 * The factor base of up to `size` primes for kN, made by the kernel in its static arrays, where the sieve
 * reads it; or a prime of it that divides n (outside split()'s inputs).
 */
export function factorBase(n: bigint, kn: bigint, size: number): FactorBase | bigint {
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
export class Sieve {
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
  /** Cofactors above largeBound and up to this are split into two large primes. */
  private readonly doubleBound: number
  private readonly limbs: number
  private readonly terms: number
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
  /**
   * Whether |g(x)| < 2^63 over the sieve for the current polynomial: the kernel then trial-divides it alone.
   */
  private fits = false
  private random = 0x9e3779b9

  constructor(
    private readonly n: bigint,
    private readonly kn: bigint,
    fb: FactorBase,
    halfWidth: number,
    p: Params,
  ) {
    this.size = fb.primes.length
    this.width = 2 * halfWidth
    this.attach()
    let first = 1
    while (first < this.size && (this.primes[first] as number) < p.smallBound) first++
    this.firstSieved = first
    const pMax = this.primes[this.size - 1] as number
    // A cofactor below pMax^2 with no factor-base prime is prime.
    this.largeBound = Math.min(p.largeFactor * pMax, pMax * pMax - 1)
    // Past 2^53 the cofactor would not be exact on a double; rho64 splits it below 2^64.
    this.doubleBound = Math.min(this.largeBound ** p.doubleExponent, 2 ** 53)
    this.limbs = limbCount(kn)
    this.terms = kernel.qsTerms()
    // |g(x)| <= M sqrt(kN / 2) over the interval.
    const logG = bitLength(kn) / 2 - 0.5 + Math.log2(halfWidth)
    const threshold = Math.round(logG - p.thresholdLogs * Math.log2(pMax))
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
    // Gray code (Contini, section 2.4): B_(i+1) = B_i + 2 (-1)^ceil(i / 2^(v+1)) B_v, with v the trailing
    // zeros of i.
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
    // B_l = (A / q_l) gamma_l with gamma_l = t_l (A / q_l)^-1 mod q_l, so that B = sum B_l has
    // B^2 = kN (mod A).
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
    const stride = QS_MAX_KN_LIMBS * 4
    writeLimbs(this.terms, a, this.limbs)
    this.bTerms.forEach((term, l) => {
      writeLimbs(this.terms + stride * (l + 1), term, this.limbs)
    })
    kernel.qsNewA(size, qs.length, this.width / 2, this.limbs)
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

  /**
   * Sieves the current polynomial and returns the relations (full, or with one or two large primes) it
   * yields.
   */
  collect(): Relation[] {
    const count = kernel.qsSieve(this.width, this.firstSieved, this.size, this.init)
    // Resieving a prime p costs about 2 width / p steps and a fixed part for the whole polynomial, checking
    // it a fraction of a SIMD step at each candidate: from about RESIEVE_FACTOR width / count on, the first
    // costs less (the factor measured: docs/benchmarks/prime-checker.md).
    let from = this.size
    const bound = (RESIEVE_FACTOR * this.width) / count
    if (!this.fits && count > 0 && bound <= (this.primes[this.size - 1] as number)) {
      from = Math.max(this.firstSieved, this.firstAtLeast(bound))
      if (kernel.qsResieve(this.width, from, this.size, count) < 0) from = this.size
    }
    const found: Relation[] = []
    for (let c = 0; c < count; c++) {
      const j = this.candidates[c] as number
      const r = this.fits ? this.relationInKernel(j) : this.relationOnBigInts(j, c, from)
      if (r !== undefined) found.push(r)
    }
    return found
  }

  /** relationAt for a g(x) that fits a word: the kernel finds its factors, BigInt is only for y. */
  private relationInKernel(j: number): Relation | undefined {
    const count = kernel.qsRelation(j, this.size, this.width / 2, this.largeBound)
    if (count < 0) return undefined
    const indices = this.aIndices.slice()
    for (let h = 0; h < count; h++) indices.push(this.hitList[h] as number)
    const y = this.a * BigInt(j - this.width / 2) + this.b
    const cofactor = kernel.qsCofactor()
    return {
      y: y < 0n ? y + this.n : y,
      neg: kernel.qsNegative() !== 0,
      indices,
      large: cofactor === 1 ? [] : [cofactor],
    }
  }

  /**
   * Trial-divides g(x) at sieve position j (candidate c) by the primes whose roots say they divide it: those
   * below index `from` checked here, the rest found by resieving (all checked when `from` is the size).
   */
  private relationOnBigInts(j: number, c: number, from: number): Relation | undefined {
    const { primes, size, hits } = this
    // The kernel lists the primes whose roots say they divide g(x); the BigInt side divides by their
    // products.
    hits.length = 0
    const count = from < size ? kernel.qsDividingResieved(j, c, from) : kernel.qsDividing(j, size)
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
    const large = this.largePrimes(small)
    if (large === undefined) return undefined
    return { y: y < 0n ? y + this.n : y, neg, indices, large }
  }

  /**
   * The cofactor's large primes: none for 1, itself up to largeBound (it has no prime below the largest
   * factor-base prime, so below its square it is prime), two primes up to largeBound each when it is a
   * composite up to doubleBound; otherwise undefined.
   */
  private largePrimes(cofactor: number): number[] | undefined {
    if (cofactor === 1) return []
    if (cofactor <= this.largeBound) return [cofactor]
    if (cofactor > this.doubleBound) return undefined
    const c = BigInt(cofactor)
    if (kernel.isPrime64(c)) return undefined
    for (let seed = 1n; seed < 4n; seed++) {
      const d = kernel.rho64(c, seed, DOUBLE_RHO_STEPS)
      if (d === 0n) return undefined
      if (d === c) continue
      const p = Number(d)
      const q = cofactor / p
      if (p > this.largeBound || q > this.largeBound) return undefined
      return p < q ? [p, q] : [q, p]
    }
    return undefined
  }
}

/** Primes from this many times the sieve width over the candidate count on are resieved (Sieve.collect). */
const RESIEVE_FACTOR = 4

/**
 * Rho steps on a double large prime cofactor: its two primes are near the bound, below 2^26, and rho needs
 * about the square root of the smaller in steps; a cofactor that needs more is dropped.
 */
const DOUBLE_RHO_STEPS = 30_000

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

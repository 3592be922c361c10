// The Knuth-Schroeppel multiplier of the quadratic sieve (Silverman 1987, section 5): the sieve factors kN
// for a small squarefree k chosen so that the small primes divide Q(x) = (Ax + B)^2 - kN as often as they
// can, making more of the sieved values smooth. Apart from the sieve, as it is chosen once per number, from
// n alone, before the factor base exists.
import { kernel, limbCount, writeLimbs } from './kernel.js'
import { SMALL_PRIMES } from './small-primes.js'

/** Candidate multipliers k for Knuth-Schroeppel: squarefree and small, so kN grows by a few bits at most. */
const MULTIPLIERS = [1, 3, 5, 7, 11, 13, 15, 17, 19, 21, 23, 29, 31, 33, 35, 37, 39, 41, 43, 47, 51, 53, 55]

/** How many odd primes (3 to 997) rank the multipliers: past 1000 they change the score by little. */
const RANKING_COUNT = 167

/**
 * Per multiplier k and ranking prime p, (k / p) as -1 or 1, or 0 for p | k; and p's gains: made on first use.
 */
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
export function multiplier(n: bigint): number {
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

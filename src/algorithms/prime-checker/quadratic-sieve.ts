// The self-initialising quadratic sieve, the driver that ties its parts together: the Knuth-Schroeppel
// multiplier (qs-multiplier.ts), the sieve over one polynomial at a time (qs-sieve.ts), the partial
// relations with one or two large primes and the cycles that combine them (qs-partials.ts), the linear
// algebra over GF(2) that gives the congruences of squares (qs-matrix.ts) and the square root that turns a
// congruence into a divisor (qs-square-root.ts). Here: the parameters by size of n, the loop that gathers
// relations until there are enough, and the solving of the matrix, which gathers more when it yields
// nothing.
import { type Budget, grouped } from './budget.js'
import { QS_MAX_PRIMES, QS_MAX_WIDTH } from './kernel.js'
import { dependencies, pruneSingletons, removeCliques } from './qs-matrix.js'
import { multiplier } from './qs-multiplier.js'
import { PartialGraph } from './qs-partials.js'
import { factorBase, type Params, type Relation, Sieve } from './qs-sieve.js'
import { squareRoot } from './qs-square-root.js'

/** Relations kept beyond the matrix's columns, so that elimination leaves that many dependencies. */
const EXTRA_RELATIONS = 24

/** Clique removal runs when singleton removal leaves more excess relations than this (solve). */
const CLIQUE_EXCESS = 2 * EXTRA_RELATIONS

/**
 * [digits of n, factor-base size, half-width, large factor, double exponent, threshold logs, small bound],
 * factor-base size interpolated in between, the rest from the row at or above; tuned by measurement
 * (docs/benchmarks/prime-checker.md): the rows to 48 digits before the double large primes, 60 digits on
 * one number, 54, 66 and 72 set between them and not tuned.
 */
const PARAMS: [number, number, number, number, number, number, number][] = [
  [18, 50, 8192, 64, 0, 1.8, 30],
  [24, 100, 8192, 64, 0, 1.8, 30],
  [30, 220, 8192, 64, 0, 1.8, 30],
  [36, 380, 12288, 64, 0, 1.8, 30],
  [42, 650, 16384, 64, 0, 1.8, 30],
  [48, 1000, 24576, 64, 0, 1.8, 30],
  [54, 1500, 32768, 64, 1.8, 2.4, 30],
  [60, 2500, 65536, 64, 1.8, 3.0, 256],
  [66, 4000, 65536, 64, 1.8, 2.6, 30],
  [72, 6500, 65536, 64, 1.8, 2.6, 30],
]

function params(digits: number): Params {
  let i = PARAMS.findIndex((row) => digits <= row[0])
  if (i < 0) i = PARAMS.length - 1
  const row = PARAMS[i] as (typeof PARAMS)[number]
  const below = PARAMS[Math.max(0, i - 1)] as (typeof PARAMS)[number]
  const t = i === 0 || digits >= row[0] ? 1 : (digits - below[0]) / (row[0] - below[0])
  return {
    primes: Math.round(below[1] + t * (row[1] - below[1])),
    halfWidth: row[2],
    largeFactor: row[3],
    doubleExponent: row[4],
    thresholdLogs: row[5],
    smallBound: row[6],
  }
}

/**
 * A nontrivial divisor of the odd composite n (no prime factor below 2^16, not a perfect power), or undefined
 * at the budget's deadline. Throws the budget's abort reason when aborted.
 */
export function quadraticSieve(n: bigint, budget: Budget): bigint | undefined {
  const digits = n.toString().length
  const p = params(digits)
  // The table stays within the kernel's static arrays; the clamps say so where it is read.
  const size = Math.min(p.primes, QS_MAX_PRIMES)
  const halfWidth = Math.min(p.halfWidth, QS_MAX_WIDTH / 2)
  const k = multiplier(n)
  const kn = BigInt(k) * n
  const fb = factorBase(n, kn, size)
  if (typeof fb === 'bigint') return fb
  const sieve = new Sieve(n, kn, fb, halfWidth, p)
  // solve() may grow the kernel's memory, detaching fb's views of it.
  const basePrimes = fb.primes.slice()
  const full: Relation[] = []
  const graph = new PartialGraph()
  // Polynomials whose A share primes overlap in a few y, and y and -y give the same relation: a repeated full
  // relation, or a partial met twice and combined with itself, would be a dependency of its own, always
  // trivial.
  const seen = new Set<bigint>()
  let wanted = basePrimes.length + EXTRA_RELATIONS
  // Reported when the count changes: a few thousand times a run at most, many polynomials add none.
  let reported = -1
  for (;;) {
    for (let found = full.length + graph.cycles; found < wanted; found = full.length + graph.cycles) {
      if (found !== reported && budget.progress) {
        reported = found
        budget.progress(found / wanted, `sieve: ${grouped(found)} of ${grouped(wanted)} relations`)
      }
      if (budget.timeIsUp()) return undefined
      sieve.nextPolynomial()
      for (const r of sieve.collect()) {
        const y = 2n * r.y < n ? r.y : n - r.y
        if (seen.has(y)) continue
        seen.add(y)
        if (r.large.length === 0) full.push(r)
        else graph.add(r)
      }
    }
    const cycles = graph.combined(n, budget)
    if (cycles === undefined) return undefined
    const relations = full.concat(cycles)
    budget.progress?.(1, `sieve: solving the matrix of ${grouped(relations.length)} relations`)
    const found = solve(n, basePrimes, relations, budget)
    if (found === undefined) return undefined
    if (typeof found === 'bigint' && found !== 1n) return found
    sieve.attach()
    // Too few relations left after removing singletons, or every dependency gave a trivial split (each does
    // with probability at most 1/2): gather more.
    wanted = full.length + graph.cycles + (typeof found === 'number' ? found : EXTRA_RELATIONS)
  }
}

/** Column 0 for the sign, 1 + i for prime i: those with an odd exponent in the relation, ascending. */
function oddColumns(r: Relation): number[] {
  const odd = new Set<number>()
  if (r.neg) odd.add(0)
  for (const i of r.indices) {
    if (odd.has(i + 1)) odd.delete(i + 1)
    else odd.add(i + 1)
  }
  return [...odd].sort((a, b) => a - b)
}

/**
 * The congruences of squares from the exponent vectors (sign, then one bit per prime) of the relations:
 * singleton removal, clique removal when the excess is large, and the kernel's merges and elimination
 * (qs-matrix.ts); each dependency is tried for a nontrivial gcd. Returns the divisor, 1n when every
 * dependency was trivial, the number of further relations wanted when too few survive, or undefined at the
 * deadline.
 */
function solve(
  n: bigint,
  primes: Int32Array,
  relations: Relation[],
  budget: Budget,
): bigint | number | undefined {
  if (budget.timeIsUp()) return undefined
  const odd = relations.map(oddColumns)
  if (budget.timeIsUp()) return undefined
  const pruned = pruneSingletons(odd, primes.length + 1)
  if (budget.timeIsUp()) return undefined
  const excess = pruned.kept.length - pruned.columns
  if (excess < EXTRA_RELATIONS / 2) return Math.max(EXTRA_RELATIONS, Math.ceil(0.05 * pruned.columns))
  // More rows than the columns and the extra dependencies only make the matrix larger: with a large excess,
  // clique removal chooses the rows to drop; with a small one, the first rows beyond are dropped, as its cost
  // would exceed what it saves the elimination (docs/benchmarks/prime-checker.md).
  const matrix =
    excess > CLIQUE_EXCESS
      ? removeCliques(pruned.rows, pruned.columns, EXTRA_RELATIONS)
      : {
          kept: pruned.kept.map((_, r) => r),
          rows: pruned.rows.slice(0, pruned.columns + EXTRA_RELATIONS),
          columns: pruned.columns,
        }
  if (budget.timeIsUp()) return undefined
  const found = dependencies(matrix.rows, matrix.columns, EXTRA_RELATIONS, budget)
  if (found === undefined) return undefined
  for (const used of found) {
    if (budget.timeIsUp()) return undefined
    const chosen = used.map((r) => relations[pruned.kept[matrix.kept[r] as number] as number] as Relation)
    const d = squareRoot(n, primes, chosen)
    if (d !== 1n && d !== n) return d
  }
  return 1n
}

// Same-run A/B of the quadratic sieve's linear algebra alone: another checkout's denseDependencies (its path
// the first argument, its kernel built) against this checkout's structuredDependencies at several merge
// weights, on matrices dumped from solve() as JSON ({ columns, rows }, the rows solve() hands to the
// elimination) in the directory given second, one file per size: <dir>/<digits>.json. Each side's time
// includes decoding the first dependency, as solve() does, which is checked to sum to zero. Weight 0 stands
// for what solve() runs: the merges from MERGE_ROWS rows, the dense elimination alone below. Rounds
// interleaved, alternating order; CPU ms, medians.
// `npx tsx bench/prime/qs-linalg-ab.ts /tmp/qs-base /tmp/dumps [digits,...] [weights,...]` (defaults
// 40,50,60,70 and 0 and MERGE_WEIGHT); ROUNDS (default 9).
import { readFileSync } from 'node:fs'
import { Budget } from '../../src/algorithms/prime-checker/budget.js'
import { kernel } from '../../src/algorithms/prime-checker/kernel.js'
import {
  dependencies,
  MERGE_ROWS,
  MERGE_WEIGHT,
  structuredDependencies,
} from '../../src/algorithms/prime-checker/qs-matrix.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { median } from '../lib/stats.js'
import { checkoutArgument, cpuMs, importFrom } from './other-checkout.js'

writeResultOnExit(
  'qs-linalg-ab',
  {
    title: "the quadratic sieve's linear algebra, another checkout's side by side",
    script: 'bench/prime/qs-linalg-ab.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/qs-linalg-ab.ts',
  },
  ['ROUNDS'],
)

type Matrix = { columns: number; rows: number[][] }
type Dense = (odd: number[][], columns: number, budget: Budget) => Uint32Array[] | undefined
const usage = 'tsx bench/prime/qs-linalg-ab.ts <other checkout> <dump dir> [digits,...] [weights,...]'
const other = checkoutArgument(usage)
const dumps = process.argv[3]
if (dumps === undefined) throw new Error(`usage: ${usage}`)
const digitsList = (process.argv[4] ?? '40,50,60,70').split(',').map(Number)
const weights = (process.argv[5] ?? `0,${MERGE_WEIGHT}`).split(',').map(Number)
const ROUNDS = Number(process.env.ROUNDS ?? 9)
const WARM_UP = 3
/** The rows beyond the columns solve() keeps (quadratic-sieve.ts, EXTRA_RELATIONS). */
const EXTRA = 24

const { denseDependencies: otherDense, rowsOf: otherRowsOf } = await importFrom<{
  denseDependencies: Dense
  rowsOf: (history: Uint32Array) => number[]
}>(other, 'src/algorithms/prime-checker/qs-matrix.ts')

const budget = () => new Budget(performance.now() + 3_600_000)

function check(m: Matrix, used: number[] | undefined, side: string): void {
  if (used === undefined || used.length === 0) throw new Error(`${side}: no dependency`)
  const sum = new Uint8Array(m.columns)
  for (const r of used) for (const c of m.rows[r] as number[]) sum[c] = (sum[c] as number) ^ 1
  if (sum.some((x) => x !== 0)) throw new Error(`${side}: a dependency that does not sum to zero`)
}

function timeDense(m: Matrix): number {
  let first: number[] | undefined
  const ms = cpuMs(() => {
    const dependencies = otherDense(m.rows, m.columns, budget()) as Uint32Array[]
    first = otherRowsOf(dependencies[0] as Uint32Array)
  })
  check(m, first, 'A')
  return ms
}

/**
 * This checkout's structuredDependencies at a merge weight, or (weight 0) what solve() runs, dependencies().
 */
function timeStructured(m: Matrix, weight: number): number {
  let first: number[] | undefined
  const ms = cpuMs(() => {
    const found =
      weight === 0
        ? dependencies(m.rows, m.columns, EXTRA, budget())
        : structuredDependencies(m.rows, m.columns, EXTRA, budget(), weight)
    for (const used of found as Iterable<number[]>) {
      first = used
      break
    }
  })
  check(m, first, `B weight ${weight}`)
  return ms
}

console.log(`qs-linalg-ab: this checkout (B) against ${other} (A), ${ROUNDS} rounds, Node ${process.version}`)
console.log('| digits | matrix | A dense | B merge weight (0: as solve() runs) | rows left | B | B / A |')
console.log('|---|---|---|---|---|---|---|')
const matrices = digitsList.map(
  (digits) => JSON.parse(readFileSync(`${dumps}/${digits}.json`, 'utf8')) as Matrix,
)
// Untimed passes over every size first: one pass on the size at hand left the first size's figures to V8's
// compilers.
for (let pass = 0; pass < WARM_UP; pass++) {
  for (const m of matrices) {
    timeDense(m)
    for (const w of weights) timeStructured(m, w)
  }
}
digitsList.forEach((digits, at) => {
  const m = matrices[at] as Matrix
  const a: number[] = []
  const b = weights.map(() => [] as number[])
  const left = weights.map((w) => {
    timeStructured(m, w)
    return w === 0 && m.rows.length < MERGE_ROWS ? m.rows.length : kernel.qsMergeLive()
  })
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) a.push(timeDense(m))
    weights.forEach((w, i) => {
      ;(b[i] as number[]).push(timeStructured(m, w))
    })
    if (round % 2 === 1) a.push(timeDense(m))
  }
  const ma = median(a)
  weights.forEach((w, i) => {
    const mb = median(b[i] as number[])
    console.log(
      `| ${digits} | ${m.rows.length} x ${m.columns} | ${ma.toFixed(2)} ms | ${w} | ${left[i]} | ${mb.toFixed(2)} ms | ${(mb / ma).toFixed(2)} |`,
    )
  })
})

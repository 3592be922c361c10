import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Budget } from '../../../src/algorithms/prime-checker/budget.js'
import { kernel } from '../../../src/algorithms/prime-checker/kernel.js'
import {
  dependencies as allDependencies,
  denseDependencies,
  MERGE_ROWS,
  pruneSingletons,
  removeCliques,
  rowsOf,
  structuredDependencies,
} from '../../../src/algorithms/prime-checker/qs-matrix.js'
import { prng, testSeed } from '../../helpers/reference-math.js'

const SEED = testSeed('qs-matrix.test.ts')

/** A row's columns as one BigInt, bit c for column c: sums mod 2 are XORs. */
function mask(row: number[]): bigint {
  let m = 0n
  for (const c of row) m ^= 1n << BigInt(c)
  return m
}

/**
 * Checks each dependency, its rows mapped to input rows by `toInput`: not empty, summing to zero mod 2 over
 * `rows` (BigInt), and none repeated. Returns how many there were.
 */
function checkDependencies(
  dependencies: number[][],
  toInput: (r: number) => number,
  rows: number[][],
): number {
  const seen = new Set<string>()
  for (const used of dependencies) {
    const inputs = used.map(toInput)
    assert.ok(inputs.length > 0, `an empty dependency, seed ${SEED}`)
    const sum = inputs.map((r) => mask(rows[r] as number[])).reduce((a, b) => a ^ b, 0n)
    assert.equal(sum, 0n, `rows ${inputs} do not sum to zero mod 2, seed ${SEED}`)
    seen.add(inputs.join())
  }
  assert.equal(seen.size, dependencies.length, `a dependency repeated, seed ${SEED}`)
  return dependencies.length
}

/**
 * Rows shaped like relations: a few columns each, drawn far more often among the low columns (the small
 * primes) than the high ones, so that the high columns have weight 0 to 3 as the large factor-base primes do.
 */
function relationLike(next: () => number, rows: number, columns: number): number[][] {
  return Array.from({ length: rows }, () => {
    const row = new Set<number>()
    const entries = 3 + (next() % 10)
    for (let k = 0; k < entries; k++) {
      const u = (next() % 1_000_000) / 1_000_000
      row.add(Math.min(columns - 1, Math.floor(columns * u * u * u)))
    }
    return [...row].sort((a, b) => a - b)
  })
}

/** Column weights of rows. */
function weights(rows: number[][], columns: number): number[] {
  const w = new Array<number>(columns).fill(0)
  for (const row of rows) for (const c of row) w[c] = (w[c] as number) + 1
  return w
}

describe("quadratic sieve's linear algebra", () => {
  test('removeCliques removes the heaviest cliques first and keeps the excess asked for (hand-checked)', () => {
    // Columns 4 and 5 link rows 0, 1, 2 (a clique holding 8 entries); column 2 links rows 3 and 4 (4
    // entries); column 3 links rows 5 and 6 (5 entries); row 7 is alone (2 entries). 8 rows on 6 columns:
    // excess 2.
    const rows = [
      [0, 1, 4],
      [4, 5],
      [5, 0, 1],
      [0, 2],
      [2, 1],
      [0, 1, 3],
      [3, 0],
      [0, 1],
    ].map((r) => [...r].sort((a, b) => a - b))
    assert.deepEqual(removeCliques(rows, 6, 2).kept, [0, 1, 2, 3, 4, 5, 6, 7])
    // Excess 1: only the heaviest clique goes, and its columns 4 and 5 with it.
    const one = removeCliques(rows, 6, 1)
    assert.deepEqual(one.kept, [3, 4, 5, 6, 7])
    assert.equal(one.columns, 4)
    assert.deepEqual(one.rows, [
      [0, 2],
      [1, 2],
      [0, 1, 3],
      [0, 3],
      [0, 1],
    ])
    // Excess 0: rows 5 and 6 go next (5 entries, against 4 and 2); rows 3, 4 and 7 on columns 0, 1, 2 are
    // left, and they still sum to zero.
    const none = removeCliques(rows, 6, 0)
    assert.deepEqual(none.kept, [3, 4, 7])
    assert.equal(none.columns, 3)
    assert.equal(
      none.rows.map(mask).reduce((a, b) => a ^ b),
      0n,
    )
  })

  test('removeCliques leaves no singleton and no less excess than asked, on random relation-like rows', () => {
    const next = prng(SEED + 1)
    for (let round = 0; round < 30; round++) {
      const columns = 60 + (next() % 200)
      const start = pruneSingletons(relationLike(next, columns + 10 + (next() % 80), columns), columns)
      const excess = start.kept.length - start.columns
      const keep = next() % 30
      const after = removeCliques(start.rows, start.columns, keep)
      const w = weights(after.rows, after.columns)
      assert.ok(
        w.every((x) => x >= 2),
        `a column of weight ${Math.min(...w)} after clique removal, seed ${SEED}`,
      )
      assert.ok(
        after.kept.length - after.columns >= Math.min(keep, excess),
        `excess below ${keep}, seed ${SEED}`,
      )
      // Kept rows are input rows, their columns renumbered in order.
      after.kept.forEach((k, i) => {
        assert.equal((after.rows[i] as number[]).length, (start.rows[k] as number[]).length)
      })
    }
  })

  test('singletons, cliques and the kernel elimination give dependencies that sum to zero mod 2 (BigInt)', () => {
    const next = prng(SEED + 3)
    const budget = new Budget(performance.now() + 60_000)
    let found = 0
    for (let round = 0; round < 40; round++) {
      const columns = 40 + (next() % 400)
      const rows = relationLike(next, columns + 5 + (next() % 60), columns)
      const pruned = pruneSingletons(rows, columns)
      const cliques = removeCliques(pruned.rows, pruned.columns, 8)
      const dependencies = (denseDependencies(cliques.rows, cliques.columns, budget) as Uint32Array[]).map(
        rowsOf,
      )
      assert.ok(
        dependencies.length >= cliques.rows.length - cliques.columns,
        `too few dependencies, seed ${SEED}`,
      )
      found += checkDependencies(dependencies, (r) => pruned.kept[cliques.kept[r] as number] as number, rows)
    }
    assert.ok(found > 40, `${found} dependencies`)
  })

  test('denseDependencies stops at the deadline', () => {
    const next = prng(SEED + 4)
    const rows = relationLike(next, 600, 500)
    assert.equal(denseDependencies(rows, 500, new Budget(performance.now() - 1)), undefined)
  })

  test('structuredDependencies merges light columns and maps dependencies back to the input rows (hand-checked)', () => {
    // Columns 1 and 3 have weight 2: row 0 is added to row 1 and removed (column 1), then row 2 to row 3
    // (column 3), leaving rows 1, 3 and 4, each {0, 2}. The dense elimination pivots on row 1 and reduces
    // rows 3 and 4 to zero: 1 + 3 and 1 + 4, which are the input rows 0 + 1 + 2 + 3 and 0 + 1 + 4.
    const rows = [
      [0, 1],
      [1, 2],
      [2, 3],
      [0, 3],
      [0, 2],
    ]
    const budget = new Budget(performance.now() + 60_000)
    const merged = [...(structuredDependencies(rows, 4, 8, budget, 2) as Iterable<number[]>)]
    assert.deepEqual(merged, [
      [0, 1, 2, 3],
      [0, 1, 4],
    ])
  })

  test('structuredDependencies gives distinct dependencies that sum to zero mod 2 (BigInt), at random', () => {
    const next = prng(SEED + 5)
    const budget = new Budget(performance.now() + 60_000)
    let found = 0
    for (let round = 0; round < 40; round++) {
      const columns = 40 + (next() % (round < 30 ? 400 : 2000))
      const rows = relationLike(next, columns + 5 + (next() % 60), columns)
      const pruned = pruneSingletons(rows, columns)
      const extra = 1 + (next() % 30)
      const maxWeight = [2, 3, 8, 20][round % 4] as number
      const dependencies = [
        ...(structuredDependencies(pruned.rows, pruned.columns, extra, budget, maxWeight) as Iterable<
          number[]
        >),
      ]
      const excess = pruned.rows.length - pruned.columns
      assert.ok(dependencies.length >= Math.min(excess, extra), `too few dependencies, seed ${SEED}`)
      found += checkDependencies(dependencies, (r) => pruned.kept[r] as number, rows)
    }
    assert.ok(found > 100, `${found} dependencies`)
  })

  test('structuredDependencies stops at the deadline, before the merges', () => {
    const next = prng(SEED + 6)
    const rows = relationLike(next, 600, 500)
    const budget = new Budget(performance.now() + 60_000)
    assert.notEqual(structuredDependencies(rows, 500, 8, budget), undefined)
    assert.ok(kernel.qsMergeLogLength() > 0, 'no merges to stop on these rows')
    assert.equal(structuredDependencies(rows, 500, 8, new Budget(performance.now() - 1)), undefined)
    assert.equal(kernel.qsMergeLogLength(), 0, 'merges ran past the deadline')
  })

  test('dependencies sum to zero mod 2 (BigInt) on either side of MERGE_ROWS', () => {
    const next = prng(SEED + 7)
    const budget = new Budget(performance.now() + 60_000)
    for (const columns of [MERGE_ROWS / 2, MERGE_ROWS]) {
      // Half as many rows again as columns, so that as many as MERGE_ROWS are left after the singletons.
      const rows = relationLike(next, columns * 1.5, columns)
      const pruned = pruneSingletons(rows, columns)
      assert.equal(
        pruned.rows.length >= MERGE_ROWS,
        columns === MERGE_ROWS,
        `${pruned.rows.length} rows left`,
      )
      const count = pruned.rows.length
      let found = 0
      for (const used of allDependencies(pruned.rows, pruned.columns, 24, budget) as Iterable<number[]>) {
        const sum = used
          .map((r) => mask(rows[pruned.kept[r] as number] as number[]))
          .reduce((a, b) => a ^ b, 0n)
        assert.ok(
          used.length > 0 && sum === 0n,
          `${count} rows: rows ${used} do not sum to zero, seed ${SEED}`,
        )
        found++
      }
      assert.ok(
        found >= Math.min(24, pruned.rows.length - pruned.columns),
        `${count} rows: ${found} dependencies`,
      )
    }
  })
})

test('pruneSingletons drops rows with a column no other row has, repeatedly, and renumbers columns', () => {
  // Columns 0 to 5. Row 3 is alone in column 5; once it goes, row 2 is alone in column 4.
  const rows = [
    [0, 1],
    [1, 2],
    [2, 4],
    [3, 4, 5],
    [0, 2],
  ]
  const { kept, rows: pruned, columns } = pruneSingletons(rows, 6)
  assert.deepEqual(kept, [0, 1, 4])
  // Columns 0, 1 and 2 remain, numbered 0, 1, 2; 3, 4 and 5 are gone.
  assert.equal(columns, 3)
  assert.deepEqual(pruned, [
    [0, 1],
    [1, 2],
    [0, 2],
  ])
  // Nothing to prune: every column has two rows.
  assert.deepEqual(pruneSingletons([[0], [0]], 1).kept, [0, 1])
})

// The quadratic sieve's linear algebra over GF(2): each relation is a row listing the columns (sign, primes)
// where its exponent is odd, and a dependency is a set of rows whose columns all cancel. Filtering first
// makes the matrix small while keeping enough dependencies (Cavallar, "Strategies in filtering in the number
// field sieve", 2000): singleton removal, then clique removal while there are more rows than the elimination
// needs. Structured Gaussian elimination (LaMacchia and Odlyzko 1990) follows: on large matrices the kernel
// merges away the light columns on sparse rows (structuredDependencies; merging in TypeScript cost more than
// it saved: docs/benchmarks/prime-checker.md), then eliminates the rest on packed bit rows, the lightest
// columns first, as their pivots meet few rows (denseDependencies).
import type { Budget } from './budget.js'
import { ensureBytes, kernel } from './kernel.js'

/** A row's columns, ascending. */
export type Row = ArrayLike<number>

/** Rows kept with their original indices and renumbered columns. */
export interface Filtered {
  kept: number[]
  rows: number[][]
  columns: number
}

/**
 * Repeatedly drops every row with a column (a prime, or the sign) no other remaining row has (Pomerance and
 * Smith 1992): such a row is in no dependency. Returns the kept rows' indices, their columns numbered from 0
 * among the columns still used, and the count of those columns.
 */
export function pruneSingletons(odd: number[][], columns: number): Filtered {
  const weight = new Int32Array(columns)
  for (const row of odd) for (const c of row) weight[c] = (weight[c] as number) + 1
  const alive = new Uint8Array(odd.length).fill(1)
  for (let changed = true; changed; ) {
    changed = false
    odd.forEach((row, r) => {
      if (!alive[r] || !row.some((c) => weight[c] === 1)) return
      alive[r] = 0
      changed = true
      for (const c of row) weight[c] = (weight[c] as number) - 1
    })
  }
  return renumber(odd, alive, weight)
}

/** The rows still alive, with the columns of nonzero weight numbered from 0. */
function renumber(odd: number[][], alive: Uint8Array, weight: Int32Array): Filtered {
  const column = new Int32Array(weight.length).fill(-1)
  let used = 0
  for (let c = 0; c < weight.length; c++) if ((weight[c] as number) > 0) column[c] = used++
  const kept: number[] = []
  const rows: number[][] = []
  odd.forEach((row, r) => {
    if (!alive[r]) return
    kept.push(r)
    rows.push(row.map((c) => column[c] as number))
  })
  return { kept, rows, columns: used }
}

/**
 * Clique removal (Cavallar, section 3.2) on rows without singletons: rows linked by a column only they two
 * have form connected components, the cliques. Removing a whole clique of k rows frees at least its k - 1
 * linking columns, so the excess (rows less used columns) drops by at most one per clique, however large it
 * is; the singletons it leaves go too, which never lowers the excess. While the excess passes `keepExcess`,
 * removes that many of the cliques holding the most entries (a lone row is a clique of one, so the heaviest
 * rows go the same way). Returns the kept rows as pruneSingletons does.
 */
export function removeCliques(odd: number[][], columns: number, keepExcess: number): Filtered {
  const weight = new Int32Array(columns)
  for (const row of odd) for (const c of row) weight[c] = (weight[c] as number) + 1
  // Each column's rows, to find the two ends of a column of weight 2 and the last row of a singleton.
  const start = new Int32Array(columns + 1)
  for (let c = 0; c < columns; c++) start[c + 1] = (start[c] as number) + (weight[c] as number)
  const members = new Int32Array(start[columns] as number)
  const fill = start.slice(0, columns)
  odd.forEach((row, r) => {
    for (const c of row) {
      members[fill[c] as number] = r
      fill[c] = (fill[c] as number) + 1
    }
  })
  const alive = new Uint8Array(odd.length).fill(1)
  let rows = odd.length
  let used = 0
  for (let c = 0; c < columns; c++) if ((weight[c] as number) > 0) used++
  const aliveIn = (c: number, skip: number): number => {
    for (let m = start[c] as number; m < (start[c + 1] as number); m++) {
      const r = members[m] as number
      if (alive[r] && r !== skip) return r
    }
    return -1
  }
  const remove = (r: number, singletons: number[]): void => {
    alive[r] = 0
    rows--
    for (const c of odd[r] as number[]) {
      weight[c] = (weight[c] as number) - 1
      if (weight[c] === 0) used--
      else if (weight[c] === 1) singletons.push(c)
    }
  }
  const parent = new Int32Array(odd.length)
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x] as number] as number
      x = parent[x] as number
    }
    return x
  }
  // A pass can only free more room for the next one through singletons, so a few passes reach the target.
  for (let pass = 0; pass < 4 && rows - used > keepExcess; pass++) {
    for (let r = 0; r < odd.length; r++) parent[r] = r
    for (let c = 0; c < columns; c++) {
      if (weight[c] !== 2) continue
      const a = aliveIn(c, -1)
      const b = aliveIn(c, a)
      const ra = find(a)
      const rb = find(b)
      if (ra !== rb) parent[ra] = rb
    }
    const entries = new Map<number, number>()
    for (let r = 0; r < odd.length; r++) {
      if (!alive[r]) continue
      const root = find(r)
      entries.set(root, (entries.get(root) ?? 0) + (odd[r] as number[]).length)
    }
    const heaviest = [...entries]
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, rows - used - keepExcess)
      .map(([root]) => root)
    const doomed = new Set(heaviest)
    const singletons: number[] = []
    for (let r = 0; r < odd.length; r++) if (alive[r] && doomed.has(find(r))) remove(r, singletons)
    while (singletons.length > 0) {
      const c = singletons.pop() as number
      if (weight[c] !== 1) continue
      remove(aliveIn(c, -1), singletons)
    }
  }
  return renumber(odd, alive, weight)
}

/** Word operations the kernel does between two looks at the budget: a few ms. */
const ELIMINATION_WORK = 20_000_000

/**
 * Gaussian elimination over GF(2) in the kernel on packed bit rows, each with its history of combined rows:
 * returns, for each row reduced to zero, its history (bit h for row h; rowsOf lists them), a dependency; or
 * undefined at the budget's deadline. Histories are decoded only as they are tried: most factorisations need
 * the first one or two.
 */
export function denseDependencies(
  odd: readonly Row[],
  columns: number,
  budget: Budget,
): Uint32Array[] | undefined {
  const rows = odd.length
  // Rows of whole 16-byte vectors for the kernel's XOR.
  const rowWords = (columns + 31) >>> 5
  const historyWords = (rows + 31) >>> 5
  const stride = (rowWords + historyWords + 3) & ~3
  // The matrix lives in the kernel's memory from modulusPtr() on (16-byte aligned), free while the sieve runs
  // (rho and ECM use it between calls), with a byte per row after it for the pivots.
  const base = (kernel.modulusPtr() + 15) & ~15
  const matrixBytes = rows * stride * 4
  ensureBytes(base + matrixBytes + rows)
  const matrix = new Uint32Array(kernel.memory.buffer, base, rows * stride).fill(0)
  const pivoted = new Uint8Array(kernel.memory.buffer, base + matrixBytes, rows).fill(0)
  // The lightest columns first: their pivots meet few rows, so the rows stay sparse for longer and fewer of
  // them are added to; the heavy columns of the small primes come last, on a matrix already reduced.
  const weight = new Int32Array(columns)
  for (const row of odd) {
    for (let k = 0; k < row.length; k++) weight[row[k] as number] = (weight[row[k] as number] as number) + 1
  }
  const order = Array.from(weight.keys()).sort(
    (a, b) => (weight[a] as number) - (weight[b] as number) || a - b,
  )
  const place = new Int32Array(columns)
  order.forEach((c, at) => {
    place[c] = at
  })
  for (let row = 0; row < rows; row++) {
    const start = row * stride
    const entries = odd[row] as Row
    for (let k = 0; k < entries.length; k++) {
      const c = place[entries[k] as number] as number
      matrix[start + (c >>> 5)] = (matrix[start + (c >>> 5)] as number) ^ (1 << (c & 31))
    }
    matrix[start + rowWords + (row >>> 5)] = 1 << (row & 31)
  }
  const chunk = Math.max(1, Math.min(64, Math.floor(ELIMINATION_WORK / Math.max(1, rows * stride))))
  for (let c = 0; c < columns; c += chunk) {
    if (budget.timeIsUp()) return undefined
    kernel.qsEliminate(base, rows, stride, c, Math.min(columns, c + chunk), base + matrixBytes)
  }
  const dependencies: Uint32Array[] = []
  for (let r = 0; r < rows; r++) {
    if (pivoted[r]) continue
    const history = r * stride + rowWords
    dependencies.push(matrix.slice(history, history + historyWords))
  }
  return dependencies
}

/** The ascending row indices of a dependency's history bits (denseDependencies). */
export function rowsOf(history: Uint32Array): number[] {
  const used: number[] = []
  history.forEach((word, w) => {
    for (let bits = word; bits !== 0; bits &= bits - 1) used.push(w * 32 + 31 - Math.clz32(bits & -bits))
  })
  return used
}

/** Columns in up to this many rows are merged away on the sparse rows (structuredDependencies). */
export const MERGE_WEIGHT = 8
/**
 * Columns in more than this many times maxWeight rows keep no list of their rows: few would come back down.
 */
const TRACK_FACTOR = 4
/** Words the kernel's merges touch between two looks at the budget: a few ms at most. */
const MERGE_WORK = 100_000

/**
 * Structured Gaussian elimination: the kernel merges the columns of up to maxWeight rows on sparse rows, each
 * merge adding its column's lightest row to the others and removing it (qsMergeRun), then the remaining rows,
 * cut to their columns plus `extra`, go to denseDependencies. Each dependency is decoded as it is asked for,
 * into the ascending indices of the input rows it sums, by replaying the merges backwards. Undefined at the
 * budget's deadline.
 */
export function structuredDependencies(
  odd: readonly Row[],
  columns: number,
  extra: number,
  budget: Budget,
  maxWeight = MERGE_WEIGHT,
): Iterable<number[]> | undefined {
  const rows = odd.length
  let entries = 0
  for (const row of odd) entries += row.length
  // A merge of k rows writes k - 1 rows anew and logs k - 1 additions; past the arena's room the merges stop.
  const arenaWords = 8 * entries + 1024
  const colWords = 4 * entries + 8 * columns + 1024
  const logCap = Math.max(1, (maxWeight - 1) * rows)
  const base = (kernel.modulusPtr() + 15) & ~15
  ensureBytes(base + kernel.qsMergeBytes(rows, columns, maxWeight, arenaWords, colWords, logCap))
  const layout = new Int32Array(kernel.memory.buffer, base, rows + 1 + entries)
  let at = rows + 1
  for (let r = 0; r < rows; r++) {
    layout[r] = at - rows - 1
    const row = odd[r] as Row
    for (let k = 0; k < row.length; k++) layout[at++] = row[k] as number
  }
  layout[rows] = entries
  kernel.qsMergeInit(base, rows, columns, maxWeight, TRACK_FACTOR * maxWeight, arenaWords, colWords, logCap)
  do if (budget.timeIsUp()) return undefined
  while (kernel.qsMergeRun(MERGE_WORK) === 0)
  const memory = kernel.memory.buffer
  const weight = new Int32Array(memory, kernel.qsMergeWeights(), columns)
  const column = new Int32Array(columns)
  let used = 0
  for (let c = 0; c < columns; c++) column[c] = (weight[c] as number) > 0 ? used++ : -1
  const offsets = new Int32Array(memory, kernel.qsMergeRowOffsets(), rows)
  const lengths = new Int32Array(memory, kernel.qsMergeRowLengths(), rows)
  const arena = new Int32Array(memory, kernel.qsMergeArena(), arenaWords)
  // Copied out of the kernel's memory, where the dense elimination goes next.
  const ids: number[] = []
  let size = 0
  for (let r = 0; r < rows && ids.length < used + extra; r++) {
    const length = lengths[r] as number
    if (length < 0) continue
    ids.push(r)
    size += length
  }
  const flat = new Int32Array(size)
  const reduced: Int32Array[] = []
  let to = 0
  for (const r of ids) {
    const from = offsets[r] as number
    const length = lengths[r] as number
    for (let k = 0; k < length; k++) flat[to + k] = column[arena[from + k] as number] as number
    reduced.push(flat.subarray(to, to + length))
    to += length
  }
  const log = new Int32Array(memory, kernel.qsMergeLog(), 2 * kernel.qsMergeLogLength()).slice()
  const dense = denseDependencies(reduced, used, budget)
  if (dense === undefined) return undefined
  return (function* () {
    for (const history of dense) {
      // Row r was made r + p by each logged (r, p): backwards, a sum holding r holds the r before and p.
      const holds = new Uint8Array(rows)
      for (const m of rowsOf(history)) holds[ids[m] as number] = 1
      for (let t = log.length - 2; t >= 0; t -= 2) {
        if (holds[log[t] as number]) holds[log[t + 1] as number] = (holds[log[t + 1] as number] as number) ^ 1
      }
      const sum: number[] = []
      holds.forEach((h, r) => {
        if (h) sum.push(r)
      })
      yield sum
    }
  })()
}

/**
 * Rows from which the merges save more than they cost (docs/benchmarks/prime-checker.md); below, the dense
 * elimination alone.
 */
export const MERGE_ROWS = 1000

/**
 * The dependencies of the rows, each as the ascending indices of the rows it sums, decoded as asked for:
 * structuredDependencies on matrices of MERGE_ROWS rows or more, else denseDependencies. Undefined at the
 * budget's deadline.
 */
export function dependencies(
  odd: readonly Row[],
  columns: number,
  extra: number,
  budget: Budget,
): Iterable<number[]> | undefined {
  if (odd.length >= MERGE_ROWS) return structuredDependencies(odd, columns, extra, budget)
  const dense = denseDependencies(odd, columns, budget)
  if (dense === undefined) return undefined
  return (function* () {
    for (const history of dense) yield rowsOf(history)
  })()
}

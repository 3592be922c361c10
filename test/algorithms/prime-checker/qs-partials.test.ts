// The large-prime variation's bookkeeping: partial relations as edges of a graph whose cycles combine into
// full relations (qs-partials.ts).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PartialGraph } from '../../../src/algorithms/prime-checker/qs-partials.js'

/** A partial relation with the given large primes; y and the indices are placeholders the graph carries. */
function partial(y: bigint, large: number[]) {
  return { y, neg: false, indices: [Number(y)], large }
}

test('PartialGraph counts cycles as edges close them, and combines each into even large primes', () => {
  const graph = new PartialGraph()
  // 7 alone, 11 with 1: no cycle. 7 again with 1: the two single partials of 7 close one.
  graph.add(partial(2n, [7]))
  graph.add(partial(3n, [11]))
  assert.equal(graph.cycles, 0)
  graph.add(partial(5n, [7]))
  assert.equal(graph.cycles, 1)
  // 13 * 17, 13, 17: a triangle through 1 closes a second cycle at its third edge.
  graph.add(partial(7n, [13, 17]))
  assert.equal(graph.cycles, 1)
  graph.add(partial(11n, [13]))
  assert.equal(graph.cycles, 1)
  graph.add(partial(13n, [17]))
  assert.equal(graph.cycles, 2)
  // 19 * 23 and 23 * 29 hang off nothing: no cycle, however many such edges.
  graph.add(partial(17n, [19, 23]))
  graph.add(partial(19n, [23, 29]))
  assert.equal(graph.cycles, 2)
  const combined = graph.combined(1000003n) ?? []
  assert.equal(combined.length, 2)
  const ys = combined.map((r) => r.y).sort((a, b) => (a < b ? -1 : 1))
  // The cycles are {2, 5} on 7 and {7, 11, 13} on 13 and 17: their y multiply.
  assert.deepEqual(ys, [10n, 1001n])
  for (const r of combined) {
    const counts = new Map<number, number>()
    for (const l of r.large) counts.set(l, (counts.get(l) ?? 0) + 1)
    for (const [l, c] of counts) assert.equal(c % 2, 0, `large prime ${l} appears ${c} times`)
    // Each relation's placeholder index is its y: the combined indices are the cycle's edges.
    assert.deepEqual(
      [...r.indices].sort((a, b) => a - b),
      r.y === 10n ? [2, 5] : [7, 11, 13],
    )
  }
})

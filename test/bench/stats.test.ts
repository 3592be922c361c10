import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { median, nearestRankPercentile, percentile, upperMedian } from '../../bench/lib/stats.js'

// 1 to 100, shuffled: the functions sort a copy, so the order they get must not matter.
const hundred = Array.from({ length: 100 }, (_, i) => ((i * 37) % 100) + 1)

test('bench stats: the medians of odd and even counts, in any order, leaving the input as it was', () => {
  const odd = [5, 1, 3]
  const even = [4, 1, 3, 2]
  assert.equal(median(odd), 3)
  assert.equal(median(even), 2.5)
  assert.equal(median([7]), 7)
  assert.equal(upperMedian(odd), 3)
  assert.equal(upperMedian(even), 3)
  assert.equal(upperMedian([7]), 7)
  assert.equal(median(hundred), 50.5)
  assert.equal(upperMedian(hundred), 51)
  assert.deepEqual(even, [4, 1, 3, 2])
})

test('bench stats: percentiles at 0, 50, 99 and 100, by index ⌊p·n⌋ and by nearest rank', () => {
  assert.deepEqual(
    [0, 0.5, 0.99, 1].map((p) => percentile(hundred, p)),
    [1, 51, 100, 100],
  )
  assert.deepEqual(
    [0, 0.5, 0.99, 1].map((p) => nearestRankPercentile(hundred, p)),
    [1, 50, 99, 100],
  )
  const four = [40, 10, 30, 20]
  assert.deepEqual(
    [0, 0.5, 0.99, 1].map((p) => percentile(four, p)),
    [10, 30, 40, 40],
  )
  assert.deepEqual(
    [0, 0.5, 0.99, 1].map((p) => nearestRankPercentile(four, p)),
    [10, 20, 40, 40],
  )
  assert.equal(percentile([3], 0.99), 3)
  assert.equal(nearestRankPercentile([3], 0), 3)
})

test('bench stats: no values, or a p outside 0 to 1, is refused rather than answered', () => {
  for (const statistic of [median, upperMedian, (xs: number[]) => percentile(xs, 0.5)]) {
    assert.throws(() => statistic([]), RangeError)
  }
  assert.throws(() => nearestRankPercentile([], 0.5), RangeError)
  for (const p of [-0.1, 1.5, 99, Number.NaN]) {
    assert.throws(() => percentile([1, 2], p), RangeError)
    assert.throws(() => nearestRankPercentile([1, 2], p), RangeError)
  }
})

test('bench stats: the .mjs scripts, run with plain node, load the same implementation', () => {
  const module = fileURLToPath(new URL('../../bench/lib/stats.mjs', import.meta.url))
  const printed = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const s = await import(${JSON.stringify(module)}); console.log(s.median([4, 1, 3, 2]), s.percentile([1, 2, 3], 0.99))`,
    ],
    { encoding: 'utf8' },
  )
  assert.equal(printed.trim(), '2.5 3')
})

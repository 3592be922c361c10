// The statistics the bench scripts share. Plain JavaScript, so that the scripts run with plain node (the
// .mjs ones) import it as it is; stats.ts re-exports it for the TypeScript ones, with its types in
// stats.d.mts. Each takes the values in any order, sorts a copy, and refuses an empty list: a figure
// over no samples is a broken run, not a number to print.

/** A sorted copy of `values`; a RangeError if there are none. */
function sortedCopy(values) {
  if (values.length === 0) throw new RangeError('a statistic of no values')
  return [...values].sort((a, b) => a - b)
}

function checkFraction(p) {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`a percentile of ${p}: give a fraction from 0 to 1`)
}

/** The median; for an even count, the mean of the two middle values. */
export function median(values) {
  const sorted = sortedCopy(values)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** The median without interpolation; for an even count, the higher of the two middle values. */
export function upperMedian(values) {
  return percentile(values, 0.5)
}

/**
 * The `p` quantile (`p` from 0 to 1) without interpolation: the value at index ⌊p·n⌋ of the sorted values
 * (the last one for p = 1), the smallest value with more than p·n values at or below it. p = 0.5 is
 * upperMedian; for 100 values, p = 0.99 is the largest.
 */
export function percentile(values, p) {
  checkFraction(p)
  const sorted = sortedCopy(values)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

/**
 * The `p` quantile (`p` from 0 to 1) by nearest rank: the ⌈p·n⌉-th smallest value (the smallest for
 * p = 0), the smallest value with at least p·n values at or below it. For an even count p = 0.5 is the
 * lower of the two middle values; for 100 values, p = 0.99 is the 99th.
 */
export function nearestRankPercentile(values, p) {
  checkFraction(p)
  const sorted = sortedCopy(values)
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]
}

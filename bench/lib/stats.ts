// The statistics the bench scripts share, for the TypeScript ones: one implementation, in stats.mjs, which
// the scripts run with plain node import directly.
export { median, nearestRankPercentile, percentile, upperMedian } from './stats.mjs'

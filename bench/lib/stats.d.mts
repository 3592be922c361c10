// The types of stats.mjs, whose comments say what each function gives.

export function median(values: readonly number[]): number
export function upperMedian(values: readonly number[]): number
export function percentile(values: readonly number[], p: number): number
export function nearestRankPercentile(values: readonly number[], p: number): number

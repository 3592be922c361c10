// The job summary (GET /job-summary), the same in every backend: how many jobs each state holds, and
// how many ended in each of the last minutes, with their latency (creation to end) in fixed buckets.
// Every backend keeps counters as jobs change (embedded: triggers in the job's own transaction; redis:
// BullMQ's counts and metrics, and a hash a minute), so reading one costs the same however many jobs
// are kept: the dashboard asks at every refresh.
import type { JobState } from './job.js'

/** How many minutes the summary looks back, the current one last. */
export const SUMMARY_MINUTES = 15
export const MINUTE_MS = 60_000

/**
 * The latency buckets' upper bounds (inclusive), ms; one more bucket holds the jobs above the last.
 * A 1-2-5 ladder: a median or p95 read from it is within a bucket's width, enough for a small chart.
 * The embedded store's triggers bucket with these same bounds (embedded/migrations/v3-job-summary.ts):
 * a change here needs a migration there.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
]

/** The bucket of a latency: the first bound at or above it, or the last bucket past them all. */
export function latencyBucket(ms: number): number {
  const i = LATENCY_BOUNDS_MS.findIndex((bound) => ms <= bound)
  return i === -1 ? LATENCY_BOUNDS_MS.length : i
}

export interface MinuteEnds {
  /** The minute's start (unix ms, a whole UTC minute). */
  minute: number
  completed: number
  failed: number
  /** Jobs that ended in the minute, by latency bucket (LATENCY_BOUNDS_MS, then the one above). */
  latency: number[]
  /** Their latencies added up, ms (with the buckets' count, the mean). */
  latencySumMs: number
}

export interface JobSummary {
  /** Jobs in each state now; expired jobs are not counted. */
  counts: Record<JobState, number>
  /** Jobs that ended in each of the last SUMMARY_MINUTES minutes, oldest first. */
  ended: MinuteEnds[]
}

/** The starts of the last SUMMARY_MINUTES whole minutes at `now`, oldest first. */
export function summaryMinutes(now: number): number[] {
  const current = Math.floor(now / MINUTE_MS) * MINUTE_MS
  return Array.from({ length: SUMMARY_MINUTES }, (_, i) => current - (SUMMARY_MINUTES - 1 - i) * MINUTE_MS)
}

export const emptyMinute = (minute: number): MinuteEnds => ({
  minute,
  completed: 0,
  failed: 0,
  latency: LATENCY_BOUNDS_MS.map(() => 0).concat(0),
  latencySumMs: 0,
})

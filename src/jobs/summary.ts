// The job summary (GET /job-summary), the same in every backend: how many jobs each state holds, and
// how many ended in each of the last minutes. Counted by the backend over every job it keeps, so the
// dashboard's overview stays exact however many jobs there are (a listed sample cannot be).
import type { JobState } from './store.js'

/** How many minutes the summary looks back, the current one last. */
export const SUMMARY_MINUTES = 15
export const MINUTE_MS = 60_000

export interface MinuteEnds {
  /** The minute's start (unix ms, a whole UTC minute). */
  minute: number
  completed: number
  failed: number
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

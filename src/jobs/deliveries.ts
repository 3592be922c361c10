// A job's webhook delivery as GET /jobs/{job_id}/deliveries shows it: its attempts and its state, the
// same in every backend (each stores the attempts its own way).
import type { AttemptResult } from '../webhooks/sender.js'

export type DeliveryState = 'none' | 'waiting' | 'retrying' | 'delivered' | 'failed'

/** One attempt. Times are unix ms. */
export interface DeliveryAttempt {
  attempt: number
  at: number
  durationMs: number
  statusCode: number | null
  error: string | null
  /** When the next attempt is due, for an attempt that is retried. */
  nextAttemptAt: number | null
}

export interface DeliveryHistory {
  jobId: string
  url: string | null
  state: DeliveryState
  attempts: DeliveryAttempt[]
}

/** The record of an attempt that counts (not one cut short by a shutdown). */
export function attemptRecord(
  result: AttemptResult,
  attempt: number,
  at: number,
  durationMs: number,
  nextAttemptAt: number | null,
): DeliveryAttempt {
  const base = { attempt, at, durationMs: Math.round(durationMs * 10) / 10, nextAttemptAt }
  switch (result.kind) {
    case 'success':
      return { ...base, statusCode: result.statusCode, error: null }
    case 'gone':
      return { ...base, statusCode: 410, error: 'the receiver answered 410 Gone' }
    case 'failure':
      return { ...base, statusCode: result.statusCode ?? null, error: result.error }
    case 'refused':
      return { ...base, statusCode: null, error: result.error }
    case 'aborted':
      return { ...base, statusCode: null, error: 'cut short by a shutdown' }
  }
}

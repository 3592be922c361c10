// A job's webhook delivery as GET /jobs/{job_id}/deliveries shows it: its attempts and its state, the
// same in every backend (each stores the attempts its own way: docs/jobs.md, deliveries).
import type { DeliveryAttempt } from '../webhooks/attempt.js'
import type { JobRecord } from './job.js'

export type { DeliveryAttempt }

export type DeliveryState = 'none' | 'waiting' | 'retrying' | 'delivered' | 'failed'

export interface DeliveryHistory {
  jobId: string
  url: string | null
  state: DeliveryState
  attempts: DeliveryAttempt[]
}

/** A delivery as a backend keeps it: its target, its attempts so far, and how it ended if it has. */
export interface StoredDelivery {
  url: string
  attempts: DeliveryAttempt[]
  ended: 'delivered' | 'failed' | null
}

/**
 * The deliveries of `job`: none without a webhook; waiting until a first attempt counts (or while
 * the delivery is not made yet), retrying after one, then delivered or failed for good.
 */
export function deliveryHistory(job: JobRecord, delivery: StoredDelivery | null): DeliveryHistory {
  if (job.webhook === null) return { jobId: job.id, url: null, state: 'none', attempts: [] }
  if (delivery === null) return { jobId: job.id, url: job.webhook, state: 'waiting', attempts: [] }
  const { url, attempts, ended } = delivery
  return { jobId: job.id, url, state: ended ?? (attempts.length === 0 ? 'waiting' : 'retrying'), attempts }
}

// The webhook of a job that just ended (decisions.md, Webhooks): its payload and its Standard Webhooks id.
import { randomBytes } from 'node:crypto'
import type { JobRecord, NewDelivery } from '../jobs/embedded/store.js'
import { jsonText, jsonTime } from '../jobs/job-view.js'

/** A fresh Standard Webhooks `webhook-id`, the same on every attempt of one delivery. */
export const newWebhookId = (): string => `msg_${randomBytes(12).toString('hex')}`

/**
 * The body sent for an ended job. It is built from the stored JSON text as is, so big integers reach
 * the receiver exactly.
 */
export function webhookPayload(job: JobRecord, completedAt: number): string {
  return (
    `{"job_id":${jsonText(job.id)},"status":${jsonText(job.status)},"algorithm":${jsonText(job.algorithm)},` +
    `"result":${job.result ?? 'null'},"error":${jsonText(job.error)},"metadata":${job.metadata ?? 'null'},` +
    `"completed_at":${jsonTime(completedAt)}}`
  )
}

/** The delivery of a job that just ended, or null without a webhook. */
export function webhookDelivery(job: JobRecord): NewDelivery | null {
  if (job.webhook === null || job.completedAt === null) return null
  return {
    id: newWebhookId(),
    jobId: job.id,
    url: job.webhook,
    payload: webhookPayload(job, job.completedAt),
  }
}

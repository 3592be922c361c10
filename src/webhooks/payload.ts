// The webhook of a job that just ended (decisions.md, Webhooks): its payload and its Standard Webhooks id.
import { randomBytes } from 'node:crypto'
import { jsonText, jsonTime } from '../jobs/job-view.js'
import type { JobRecord, NewDelivery } from '../jobs/store.js'

/**
 * The delivery of a job that just ended, or null without a webhook. The body is built from the stored
 * JSON text as is, so big integers reach the receiver exactly.
 */
export function webhookDelivery(job: JobRecord): NewDelivery | null {
  if (job.webhook === null || job.completedAt === null) return null
  const payload =
    `{"job_id":${jsonText(job.id)},"status":${jsonText(job.status)},"algorithm":${jsonText(job.algorithm)},` +
    `"result":${job.result ?? 'null'},"error":${jsonText(job.error)},"metadata":${job.metadata ?? 'null'},` +
    `"completed_at":${jsonTime(job.completedAt)}}`
  return { id: `msg_${randomBytes(12).toString('hex')}`, jobId: job.id, url: job.webhook, payload }
}

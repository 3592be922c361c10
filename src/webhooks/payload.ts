// The webhook of a job that just ended (docs/webhooks.md): its payload and its Standard Webhooks id.
import { jsonText, jsonTime } from '../jobs/json-text.js'
import { randomHex } from '../jobs/random-hex.js'

/** A fresh Standard Webhooks `webhook-id`, the same on every attempt of one delivery. */
export const newWebhookId = (): string => `msg_${randomHex(12)}`

/** What the payload tells of an ended job (a job's record has these). Result and metadata are JSON. */
export interface EndedJob {
  id: string
  status: string
  algorithm: string
  result: string | null
  error: string | null
  metadata: string | null
}

/**
 * The body sent for an ended job. It is built from the stored JSON text as is, so big integers reach
 * the receiver exactly.
 */
export function webhookPayload(job: EndedJob, completedAt: number): string {
  return (
    `{"job_id":${jsonText(job.id)},"status":${jsonText(job.status)},"algorithm":${jsonText(job.algorithm)},` +
    `"result":${job.result ?? 'null'},"error":${jsonText(job.error)},"metadata":${job.metadata ?? 'null'},` +
    `"completed_at":${jsonTime(completedAt)}}`
  )
}

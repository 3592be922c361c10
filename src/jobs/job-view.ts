// How a stored job is shown: the body of GET /jobs/{job_id}, and the webhook payload.
import { randomBytes } from 'node:crypto'
import type { JobRecord, NewDelivery } from './store.js'

/** ISO 8601 in UTC with an explicit +00:00 offset and milliseconds (decisions.md, Jobs). */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '+00:00')
}

/** A fresh job id: 12 lowercase hex characters from a cryptographic source. */
export function newJobId(): string {
  return randomBytes(6).toString('hex')
}

const text = (value: string | null) => JSON.stringify(value)
const time = (ms: number | null) => (ms === null ? 'null' : JSON.stringify(isoTime(ms)))

/**
 * The body of GET /jobs/{job_id} as JSON text, every member present and null where empty. Result and
 * metadata are stored as JSON and written as they are, so big integers stay exact and a read costs no
 * parsing.
 */
export function jobStatusJson(job: JobRecord): string {
  return (
    `{"job_id":${text(job.id)},"status":${text(job.status)},"algorithm":${text(job.algorithm)},` +
    `"created_at":${time(job.createdAt)},"started_at":${time(job.startedAt)},` +
    `"completed_at":${time(job.completedAt)},"result":${job.result ?? 'null'},"error":${text(job.error)},` +
    `"metadata":${job.metadata ?? 'null'}}`
  )
}

/**
 * The webhook delivery of a job that just ended (decisions.md, Webhooks). The body is built from the
 * stored JSON text as is, so big integers reach the receiver exactly.
 */
export function webhookDelivery(job: JobRecord): NewDelivery | null {
  if (job.webhook === null || job.completedAt === null) return null
  const payload =
    `{"job_id":${text(job.id)},"status":${text(job.status)},"algorithm":${text(job.algorithm)},` +
    `"result":${job.result ?? 'null'},"error":${text(job.error)},"metadata":${job.metadata ?? 'null'},` +
    `"completed_at":${time(job.completedAt)}}`
  return { id: `msg_${randomBytes(12).toString('hex')}`, jobId: job.id, url: job.webhook, payload }
}

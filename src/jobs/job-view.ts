// How a stored job is shown: the body of GET /jobs/{job_id}, and a new job's id.

import type { JobProgress, JobRecord } from './job.js'
import { jsonText, jsonTime } from './json-text.js'
import { randomHex } from './random-hex.js'

/**
 * A fresh job id: 12 lowercase hex characters from a cryptographic source. Never all decimal digits
 * without a leading zero: BullMQ refuses such ids (they read as integers), about 1 draw in 310.
 */
export function newJobId(): string {
  for (;;) {
    const id = randomHex(6)
    if (!/^[1-9][0-9]{11}$/.test(id)) return id
  }
}

/**
 * The body of GET /jobs/{job_id} as JSON text, every member present and null where empty. Result and
 * metadata are stored as JSON and written as they are, so big integers stay exact and a read costs no
 * parsing.
 */
export function jobStatusJson(job: JobRecord): string {
  return (
    `{"job_id":${jsonText(job.id)},"status":${jsonText(job.status)},"algorithm":${jsonText(job.algorithm)},` +
    `"created_at":${jsonTime(job.createdAt)},"started_at":${jsonTime(job.startedAt)},` +
    `"completed_at":${jsonTime(job.completedAt)},"result":${job.result ?? 'null'},"error":${jsonText(job.error)},` +
    `"metadata":${job.metadata ?? 'null'}}`
  )
}

/** The members GET /jobs/{job_id}?include= may add to the job's body, after the interface's own. */
export const JOB_INCLUDES = ['params'] as const

export type JobInclude = (typeof JOB_INCLUDES)[number]

/**
 * The body of GET /jobs/{job_id} with the members asked for: `params`, the job's params as it stored them
 * after their check (JSON text, so big integers come back exact). With none, jobStatusJson's body.
 */
export function jobStatusWithJson(job: JobRecord, include: ReadonlySet<JobInclude>): string {
  const body = jobStatusJson(job)
  return include.has('params') ? `${body.slice(0, -1)},"params":${job.params}}` : body
}

/** A running job's progress as JSON, as GET /jobs items and the `progress` event show it; null for none. */
export const progressJson = (progress: JobProgress | null): string =>
  progress === null ? 'null' : `{"progress":${progress.fraction},"message":${jsonText(progress.message)}}`

/**
 * An item of GET /jobs: the job's body with its run's latest progress (null unless it runs and told some).
 */
export const jobListItemJson = (job: JobRecord): string =>
  `${jobStatusJson(job).slice(0, -1)},"progress":${progressJson(job.progress)}}`

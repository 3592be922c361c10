// Polling a job over HTTP until it reaches a state, as a client would.
import type { JobState } from '../../src/jobs/job.js'
import { until } from './time.js'

export interface JobBody {
  job_id: string
  status: JobState
  algorithm: string
  created_at: string
  started_at: string | null
  completed_at: string | null
  result: Record<string, unknown> | null
  error: string | null
  metadata: Record<string, unknown> | null
}

export async function createJob(
  url: string,
  body: Record<string, unknown>,
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${url}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  }
}

/** Reads the job until `done` holds for it, or fails after `timeoutMs`. */
export async function waitForJob(
  url: string,
  id: string,
  done: (job: JobBody) => boolean = (job) => job.status === 'completed' || job.status === 'failed',
  timeoutMs = 20_000,
): Promise<JobBody> {
  let last: unknown
  const seen = async () => {
    const response = await fetch(`${url}/jobs/${id}`)
    last = await response.json()
    return response.status === 200 && done(last as JobBody) && (last as JobBody)
  }
  return until(seen, timeoutMs, () => `job ${id} got there; last seen: ${JSON.stringify(last)}`)
}

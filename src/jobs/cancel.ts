// How a cancel ends, the same in every backend (docs/jobs.md, cancel): a job not there, or ended
// before the cancel, is told as it is; otherwise the cancel waits up to CANCEL_WAIT_MS for the job to
// end, and then says what ended it.
import { JOB_CANCELLED } from '../errors.js'
import type { CancelResult } from './backend.js'
import { isEnded, type JobRecord } from './job.js'

/**
 * How long a cancel waits for a running job to end. A run stops within a second of its abort; this
 * bounds a cancel whose run is stuck, or whose process is gone: then it answers `stopping`.
 */
export const CANCEL_WAIT_MS = 5000

/** The answer for a job read before the cancel, or null when it is pending or running (to cancel). */
export function beforeCancel(job: JobRecord | null): CancelResult | null {
  if (job === null) return { kind: 'not_found' }
  if (isEnded(job.status)) return { kind: 'finished', job }
  return null
}

/**
 * The answer for the job read once the cancel has waited: not ended past the deadline (running, or
 * taken and waiting for a thread or a process), stopping.
 */
export function afterCancel(job: JobRecord | null): CancelResult {
  if (job === null) return { kind: 'not_found' }
  if (!isEnded(job.status)) return { kind: 'stopping', job }
  if (job.status === 'failed' && job.error === JOB_CANCELLED) return { kind: 'cancelled', job }
  return { kind: 'finished', job }
}

/** Waits for `promise` until the unix ms `deadline`; answers whether it settled first. */
export async function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()), false)
  })
  try {
    return await Promise.race([promise.then(() => true), late])
  } finally {
    clearTimeout(timer)
  }
}

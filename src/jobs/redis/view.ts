// A BullMQ job as one of ours: the data we store with it (and with its webhook's delivery), and the
// JobRecord a read gives, derived from its BullMQ state (docs/distributed.md). BullMQ's fields outlive
// a state (processedOn survives a give-back), so every field is taken from the state.
import { Job, type Queue } from 'bullmq'
import { JOB_CANCELLED } from '../../errors.js'
import type { LostRun } from '../../tracing/seams.js'
import type { DeliveryAttempt } from '../../webhooks/attempt.js'
import {
  isEnded,
  type JobProgress,
  type JobRecord,
  type JobState,
  lostRunsError,
  MAX_LOST_RUNS,
} from '../job.js'
import { UNPINNED } from '../pinned.js'

/** What a job carries in Redis; its BullMQ name is the algorithm. */
export interface RedisJobData {
  /** The version it is pinned to; absent on a job queued before versions (it runs on the default). */
  version?: string
  params: string
  webhook: string | null
  cheap: boolean
  /** When POST /jobs/{job_id}/cancel asked for the job to stop (unix ms). */
  cancelledAt?: number
  /** The trace context it was created in (JobRecord's `trace`), when traced. */
  trace?: string
}

/** What a job's run returns to BullMQ: the result and metadata JSON texts. */
export type RedisJobResult = [result: string, metadata: string]

export type RedisJob = Job<RedisJobData, RedisJobResult>

/** What a job's delivery carries (a job of the webhooks queue, with the job's id). */
export interface DeliveryData {
  jobId: string
  algorithm: string
  /** Its job's version (absent for a job queued before versions): with the algorithm, its queue. */
  version?: string
  url: string
  webhookId: string
  /** Stored at the first attempt, so that every attempt sends the same body. */
  payload?: string
  /** Every attempt that counted, stored on the delivery job after it (GET /jobs/{job_id}/deliveries). */
  attempts?: DeliveryAttempt[]
  /** Its job's trace context, when traced. */
  trace?: string
}

/** Job `id` of `queue` and its BullMQ state, read together. */
export async function readJob<D, R>(
  queue: Queue<D, R>,
  id: string,
): Promise<{ job: Job<D, R> | undefined; state: string }> {
  const [job, state] = await Promise.all([Job.fromId<D, R>(queue, id), jobState(queue, id)])
  // The two reads are not one: a job taken or ended between them reads in its new state without the
  // fields BullMQ wrote with the move (a completed job without its result). Read after the state, the
  // job has them.
  const behind =
    job !== undefined &&
    (((state === 'completed' || state === 'failed') && job.finishedOn === undefined) ||
      (state === 'active' && job.processedOn === undefined))
  return { job: behind ? await Job.fromId<D, R>(queue, id) : job, state }
}

/**
 * Job `id`'s BullMQ state. BullMQ reads it with a script over every state's key of the queue; while a
 * Cluster moves the deployment's slot to another node, a script over keys that the node holding the
 * slot does not have (moved already, or not made yet) is refused with TRYAGAIN for as long as the move
 * lasts. The same reads are then made one key at a time, which the nodes serve (with ASK redirections
 * for the keys moved); in the order a job moves through them, so that one moving meanwhile is seen.
 */
async function jobState<D, R>(queue: Queue<D, R>, id: string): Promise<string> {
  try {
    return await queue.getJobState(id)
  } catch (error) {
    if (!/TRYAGAIN/.test((error as Error).message)) throw error
  }
  const client = await queue.getBackend().client
  const { keys } = queue
  const inList = async (key: string) => (await client.lpos(key, id)) !== null
  const inSet = async (key: string) => (await client.zscore(key, id)) !== null
  const reads: Array<[string, () => Promise<boolean>]> = [
    ['waiting-children', () => inSet(keys['waiting-children'] as string)],
    ['delayed', () => inSet(keys.delayed as string)],
    ['prioritized', () => inSet(keys.prioritized as string)],
    ['waiting', () => inList(keys.wait as string)],
    ['waiting', () => inList(keys.paused as string)],
    ['active', () => inList(keys.active as string)],
    ['failed', () => inSet(keys.failed as string)],
    ['completed', () => inSet(keys.completed as string)],
  ]
  for (const [state, holds] of reads) if (await holds()) return state
  return 'unknown'
}

// BullMQ's own reason when its stalled checker gives up on a job (a backstop: our processor fails the
// job first, saying so in our words).
const BULLMQ_STALLED = 'job stalled more than allowable limit'

const STATES: Record<string, JobState | undefined> = {
  waiting: 'pending',
  prioritized: 'pending',
  delayed: 'pending',
  'waiting-children': 'pending',
  active: 'running',
  completed: 'completed',
  failed: 'failed',
}

/** The record of `job` in BullMQ state `state`, or null when it does not exist or has expired. */
export function recordOf(
  job: RedisJob | undefined,
  state: string,
  ttlMs: number,
  now: number,
): JobRecord | null {
  const status = STATES[state]
  if (job === undefined || status === undefined) return null
  // Cancelled before it ran: it reads as failed from the cancel on, whether it still waits, has just
  // been taken by a worker (which fails it without running it) or has been failed so.
  const cancelledAt = job.data.cancelledAt
  const cancelled =
    cancelledAt !== undefined &&
    (status === 'pending' || ((job.processedOn ?? 0) >= cancelledAt && state !== 'completed'))
  // Taken by a worker, a job that needs a thread or a process waits there for one of its algorithm's:
  // it runs once its run's start is stored (startOf); a cheap one runs inline as it is taken.
  const begun = startOf(job)
  const waits = status === 'running' && !job.data.cheap && begun === undefined
  const shown = cancelled ? 'failed' : waits ? 'pending' : status
  const completedAt = cancelled ? cancelledAt : isEnded(status) ? (job.finishedOn ?? null) : null
  if (completedAt !== null && completedAt + ttlMs <= now) return null
  const result = shown === 'completed' && Array.isArray(job.returnvalue) ? job.returnvalue : null
  let error: string | null = null
  if (cancelled) error = JOB_CANCELLED
  else if (shown === 'failed') {
    error = job.failedReason === BULLMQ_STALLED ? lostRunsError(MAX_LOST_RUNS) : (job.failedReason ?? null)
  }
  // One literal, every field named: on Node 20 each field added after a spread costs about a microsecond.
  return {
    id: job.id as string,
    algorithm: job.name,
    version: job.data.version ?? UNPINNED,
    params: job.data.params,
    webhook: job.data.webhook,
    cheap: job.data.cheap,
    createdAt: job.timestamp,
    runs: job.attemptsStarted,
    lostRuns: job.stalledCounter + job.attemptsMade,
    status: shown,
    startedAt: cancelled || shown === 'pending' ? null : (begun ?? job.processedOn ?? completedAt),
    completedAt,
    result: result?.[0] ?? null,
    error,
    metadata: result?.[1] ?? null,
    progress: shown === 'running' ? progressOf(job) : null,
    // Only when traced: a job's record is the same with tracing off as before it existed.
    ...(job.data.trace === undefined ? {} : { trace: job.data.trace }),
  }
}

/**
 * What a job's progress holds in BullMQ (job.updateProgress): the update, with the run that wrote it,
 * so that a run taken again does not show the progress of the run before it.
 */
export interface StoredProgress extends JobProgress, Partial<Omit<StoredStart, 'run'>> {
  run: number
}

/** What a run stores as it begins: its start, before any progress (no fraction: no progress shown). */
export interface StoredStart {
  run: number
  /** When the run began (its thread or process took it), unix ms. */
  startedAt: number
  /** The process running it (job-end.ts WORKER). */
  worker: string
  /** The job's stalls (BullMQ's stalledCounter) as it began: one more since, and its worker died. */
  stalls: number
}

/**
 * The job's run before this one, when its worker died under it once begun (BullMQ's stalled checker
 * gave the job back since), as that run stored its start; `lostAt` is when this process took the job.
 */
export function lostRunOf(job: RedisJob, lostAt: number): LostRun | undefined {
  const stored = job.progress as Partial<StoredProgress> | number | null | undefined
  if (typeof stored !== 'object' || stored === null || stored.run !== job.attemptsStarted - 1)
    return undefined
  if (typeof stored.stalls !== 'number' || job.stalledCounter <= stored.stalls) return undefined
  return {
    id: job.id as string,
    algorithm: job.name,
    trace: job.data.trace,
    attempt: stored.run,
    startedAt: typeof stored.startedAt === 'number' ? stored.startedAt : null,
    worker: stored.worker,
    lostAt,
  }
}

/** When the job's current run began, as it stored it; undefined until then (or for a cheap job). */
export function startOf(job: RedisJob): number | undefined {
  const stored = job.progress as Partial<StoredProgress> | number | null | undefined
  if (typeof stored !== 'object' || stored === null || stored.run !== job.attemptsStarted) return undefined
  return typeof stored.startedAt === 'number' ? stored.startedAt : undefined
}

function progressOf(job: RedisJob): JobProgress | null {
  const stored = job.progress as Partial<StoredProgress> | number | null | undefined
  if (typeof stored !== 'object' || stored === null || stored.run !== job.attemptsStarted) return null
  const { fraction, message, seq } = stored
  if (typeof fraction !== 'number' || typeof seq !== 'number') return null
  return { fraction, message: typeof message === 'string' ? message : null, seq }
}

// POST /jobs/{job_id}/cancel on Redis. The cancel is first a mark on the job: a pending job with it
// reads as failed from then on (view.ts), and whoever takes it (this cancel, or a worker just before)
// fails it without running it. A running job is stopped by the cancel event, in whichever process
// runs it (events.ts). The answer follows the rule every backend shares (../cancel.ts).
import { randomUUID } from 'node:crypto'
import { UnrecoverableError, type Worker } from 'bullmq'
import { JOB_CANCELLED } from '../../errors.js'
import type { CancelResult } from '../backend.js'
import { afterCancel, beforeCancel, CANCEL_WAIT_MS, settledBy } from '../cancel.js'
import { isEnded } from '../job.js'
import type { RedisConnections } from './connections.js'
import type { JobEvents } from './events.js'
import { countEnd, JOB_METRICS } from './summary.js'
import { type RedisJob, type RedisJobData, type RedisJobResult, recordOf } from './view.js'

/**
 * How often a cancel takes a job that is not the one cancelled (moved ahead of it just then) before
 * leaving it to the workers.
 */
const CANCEL_TAKE_TRIES = 5

export class RedisCancel {
  readonly #redis: RedisConnections
  readonly #events: JobEvents
  // Workers without a processor (BullMQ's manual fetching), one per queue (a version's), each made at
  // the first cancel of a waiting job in it.
  readonly #fetchers = new Map<string, Worker<RedisJobData, RedisJobResult>>()

  constructor(redis: RedisConnections, events: JobEvents) {
    this.#redis = redis
    this.#events = events
  }

  cancel(id: string, now: number): Promise<CancelResult> {
    const redis = this.#redis
    return redis.guard(async () => {
      try {
        const { job, state } = await redis.queues.read(id)
        const before = recordOf(job, state, redis.settings.ttlMs, now)
        const ended = beforeCancel(before)
        if (ended !== null || job === undefined) return ended ?? { kind: 'not_found' }
        const queue = redis.queues.ofJob(job)
        await job.updateData({ ...job.data, cancelledAt: now })
        await this.#events.subscribe()
        // Woken by the job's end in any process (QueueEvents); the event of the cancel itself wakes it
        // too, before the run has stopped, so the job is read again until it is no longer running.
        let wake = () => {}
        const onEnd = (ended: string) => {
          if (ended === id) wake()
        }
        this.#events.onEnded(onEnd)
        try {
          await this.#events.cancel(id)
          if (before?.status === 'pending') await this.#endWaiting(job, Date.now() + CANCEL_WAIT_MS)
          const deadline = Date.now() + CANCEL_WAIT_MS
          for (;;) {
            const woken = new Promise<void>((resolve) => {
              wake = resolve
            })
            // The state first, then the job: read together, a job that ends between the two reads can
            // show `failed` without its reason, which would look like another end than the cancel.
            const state = await queue.getJobState(id)
            const after = (await queue.getJob(id)) as RedisJob | undefined
            const record = recordOf(after, state, redis.settings.ttlMs, Date.now())
            if (record === null || isEnded(record.status) || Date.now() >= deadline)
              return afterCancel(record)
            await settledBy(woken, deadline)
          }
        } finally {
          this.#events.offEnded(onEnd)
        }
      } catch (error) {
        if (error instanceof Error && /Missing key/.test(error.message)) return { kind: 'not_found' }
        throw error
      }
    })
  }

  /**
   * Ends a waiting job that is marked cancelled now, however long the line ahead of it: BullMQ fails
   * only an active job (moveToFailed needs its lock), so the job is moved to the front of the line
   * (lifo) and taken by this process's fetcher, then failed as a worker fails it, which releases its
   * webhook's delivery in the same step. A job taken instead (moved to the front just then: a stalled
   * run, a give-back) goes back to the front as it was, unless it is marked cancelled too; a worker
   * that took the job first fails it itself. Bounded in time: past the deadline, the mark stays, and
   * the fetching goes on once Redis answers (its connection waits for Redis, as a worker's does).
   */
  async #endWaiting(job: RedisJob, deadline: number): Promise<void> {
    const ending = this.#takeAndFail(job).catch((error: unknown) =>
      this.#redis.log.warn({ err: error, job_id: job.id }, 'a cancelled job is left for a worker to end'),
    )
    await settledBy(ending, deadline)
  }

  async #takeAndFail(job: RedisJob): Promise<void> {
    const redis = this.#redis
    const { queueName } = job
    let fetcher = this.#fetchers.get(queueName)
    if (fetcher === undefined) {
      fetcher = redis.worker<RedisJobData, RedisJobResult>(queueName, 1, null, JOB_METRICS, redis.log)
      this.#fetchers.set(queueName, fetcher)
    }
    const queue = redis.queues.ofJob(job)
    for (let tries = 0; tries < CANCEL_TAKE_TRIES; tries++) {
      const state = await queue.getJobState(job.id as string)
      if (state !== 'waiting' && state !== 'prioritized') return
      await job.changePriority({ lifo: true })
      const token = randomUUID()
      const taken = await fetcher.getNextJob(token, { block: false })
      if (taken === undefined) return
      if (taken.data.cancelledAt === undefined) {
        await taken.moveToWait(token)
        continue
      }
      await taken.moveToFailed(new UnrecoverableError(JOB_CANCELLED), token)
      countEnd(redis, taken, 'failed')
      if (taken.id === job.id) return
    }
  }
}

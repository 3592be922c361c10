// Webhook deliveries on Redis: each is a job of the webhooks queue with the id of the job it reports
// on, released by BullMQ when that job ends (a flow). A Worker takes it, makes the attempt
// (webhooks/attempt.ts) at its receiver's pace in this process (webhooks/receiver-pace.ts) and tells
// BullMQ what the attempt came to: BullMQ retries it on our schedule (a custom backoff). The record of
// an attempt that delivers is the delivery's return value, written by the same step that completes it;
// the records of the attempts before, and of one that gives up, are kept in its data. A retry that
// falls due is taken before the fresh deliveries waiting, by BullMQ's priorities (DELIVERY_PRIORITY).
import { DelayedError, Job, type Processor, UnrecoverableError, WaitingError } from 'bullmq'
import type { FastifyBaseLogger } from 'fastify'
import { type AttemptDelivery, attemptDelivery, type DeliveryAttempt } from '../../webhooks/attempt.js'
import { webhookPayload } from '../../webhooks/payload.js'
import { ReceiverPace } from '../../webhooks/receiver-pace.js'
import type { ConsumeDeliveriesOptions, Consumer } from '../backend.js'
import { type DeliveryHistory, deliveryHistory } from '../deliveries.js'
import type { JobRecord } from '../job.js'
import { UNPINNED } from '../pinned.js'
import { type RedisConnections, WEBHOOKS } from './connections.js'
import { allOf, bullConsumer, shutdownOfRuns } from './consumers.js'
import { queueKey } from './queues.js'
import { type DeliveryData, type RedisJob, type RedisJobResult, readJob, recordOf } from './view.js'

/** BullMQ Workers taking deliveries in one process. */
const DELIVERY_WORKERS = 4

/**
 * BullMQ takes the lowest priority first (after its wait list, where deliveries of older versions
 * wait), and puts a delayed job that falls due at the end of its wait list, behind any backlog: so a
 * delivery starts fresh and becomes a retry at its first failure, to keep the retries' schedule.
 */
export const DELIVERY_PRIORITY = { retry: 1, fresh: 2 } as const

export function consumeDeliveries(
  redis: RedisConnections,
  send: AttemptDelivery,
  options: ConsumeDeliveriesOptions,
): Consumer {
  const waits = redis.settings.retryWaitsMs
  const shutdown = shutdownOfRuns()
  const pace = options.pace ?? new ReceiverPace()
  const deliver: Processor<DeliveryData, DeliveryAttempt> = async (job, token, signal) => {
    const { url } = job.data
    // Read before a slot is taken: the slot counts the receiver's time, not Redis's.
    const payload = job.data.payload ?? (await payloadOf(redis, job, options.log))
    if (!(await pace.take(url))) {
      // Its receiver has no slot free in this process: later (not an attempt), about when one should
      // be, so that the deliveries behind it, to other receivers, are taken first. It keeps its
      // priority: a fresh one goes behind the fresh ones due, a retry before them.
      await job.moveToDelayed(Date.now() + pace.retakeDelayMs(url), token)
      throw new DelayedError()
    }
    const attempted = await pace.hold(url, send, (paced) => {
      const { jobId, webhookId } = job.data
      const rules = { send: paced, retryWaitsMs: waits, log: options.log, onAttempt: options.onAttempt }
      return attemptDelivery(
        rules,
        { id: webhookId, url, payload, trace: job.data.trace },
        jobId,
        job.attemptsMade + 1,
        signal as AbortSignal,
      )
    })
    // What the attempt came to, in BullMQ's terms.
    switch (attempted.kind) {
      case 'delivered':
        return attempted.record
      case 'released':
        await job.moveToWait(token)
        throw new WaitingError()
      case 'failed':
        await keepAttempt(job, payload, attempted.record)
        throw new UnrecoverableError(attempted.error)
      case 'retry':
        // The payload too, read once: every attempt sends the same body.
        await keepAttempt(job, payload, attempted.record)
        if (job.priority !== DELIVERY_PRIORITY.retry)
          await job.changePriority({ priority: DELIVERY_PRIORITY.retry })
        throw new Error(attempted.error)
    }
  }
  const settings = { settings: { backoffStrategy: (attemptsMade: number) => waits[attemptsMade - 1] ?? 0 } }
  // A Worker takes one delivery per round trip to Redis: several share the process's places, so that
  // deliveries are taken as fast as they fall due.
  const concurrency = Math.ceil(options.maxInFlight / DELIVERY_WORKERS)
  return allOf(
    Array.from({ length: DELIVERY_WORKERS }, () =>
      bullConsumer(
        redis.worker<DeliveryData, DeliveryAttempt>(
          WEBHOOKS,
          concurrency,
          deliver,
          settings,
          options.log,
          shutdown.signal,
        ),
        shutdown,
        options.log,
      ),
    ),
  )
}

/** The delivery job (same id as the job, in the webhooks queue) holds its attempts in its data. */
export async function deliveries(
  redis: RedisConnections,
  id: string,
  now: number,
): Promise<DeliveryHistory | null> {
  const { job, state } = await redis.queues.read(id)
  const record = recordOf(job, state, redis.settings.ttlMs, now)
  if (record === null) return null
  if (record.webhook === null) return deliveryHistory(record, null)
  const delivery = await readJob(redis.webhooks, id)
  const ended = delivery.state === 'completed' ? 'delivered' : delivery.state === 'failed' ? 'failed' : null
  const kept = delivery.job?.data.attempts ?? []
  // The attempt that delivered is the return value (a delivery of an older version returned none).
  const last = ended === 'delivered' ? (delivery.job?.returnvalue as DeliveryAttempt | null) : null
  const attempts = last ? [...kept, last] : kept
  return deliveryHistory(record, { url: record.webhook, attempts, ended })
}

/** Keeps an attempt's record, and the payload it sent, in the delivery's data. */
async function keepAttempt(job: Job<DeliveryData>, payload: string, record: DeliveryAttempt): Promise<void> {
  await job.updateData({ ...job.data, payload, attempts: [...(job.data.attempts ?? []), record] })
}

/** The body of a delivery, from the job it reports on (ended: BullMQ released the delivery). */
async function payloadOf(
  redis: RedisConnections,
  delivery: Job<DeliveryData>,
  log: FastifyBaseLogger,
): Promise<string> {
  const { jobId, algorithm, version = UNPINNED } = delivery.data
  const job = (await Job.fromId(redis.queues.of(queueKey(algorithm, version)), jobId)) as RedisJob | undefined
  // BullMQ released the delivery in the step that ended the job: which end shows in its fields, with
  // no read of its state.
  const state = Array.isArray(job?.returnvalue) ? 'completed' : 'failed'
  const record = recordOf(job, state, Number.POSITIVE_INFINITY, 0)
  if (record?.completedAt != null) return webhookPayload(record, record.completedAt)
  // The job is gone already (no delivery worker ran for its whole retention): what the flow kept of
  // it; only completed_at is approximate.
  log.warn({ job_id: jobId }, 'a webhook is sent for a job already removed; its completed_at is approximate')
  const [values, failures] = await Promise.all([
    delivery.getChildrenValues(),
    delivery.getIgnoredChildrenFailures(),
  ])
  const value = Object.values(values)[0] as RedisJobResult | undefined
  const error = Object.values(failures)[0]
  const base = {
    ...(record ?? {}),
    id: jobId,
    algorithm,
    version,
    params: '{}',
    webhook: delivery.data.url,
    cheap: false,
  }
  const ended: JobRecord = {
    ...base,
    status: value === undefined ? 'failed' : 'completed',
    createdAt: 0,
    startedAt: null,
    completedAt: Date.now(),
    result: value?.[0] ?? null,
    metadata: value?.[1] ?? null,
    error: value === undefined ? (error ?? null) : null,
    runs: 0,
    lostRuns: 0,
    progress: null,
  }
  return webhookPayload(ended, ended.completedAt as number)
}

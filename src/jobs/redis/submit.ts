// POST /jobs on Redis: a job added to its version's BullMQ queue (with a webhook, as the child of its
// delivery in a flow, so that BullMQ releases the delivery in the same step that ends the job), after
// the checks BullMQ has no mechanism for (a taken id, the bound on waiting jobs); and the
// Idempotency-Key that makes a retried request answer with the job the first one made.
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { JobsOptions } from 'bullmq'
import {
  DuplicateJobIdError,
  IdempotencyKeyReusedError,
  StoreFullError,
  StoreUnavailableError,
} from '../../errors.js'
import { newWebhookId } from '../../webhooks/payload.js'
import type { IdempotencyClaim, Submitted } from '../backend.js'
import { MAX_LOST_RUNS, type NewJob } from '../job.js'
import { type RedisConnections, WEBHOOKS } from './connections.js'
import { DELIVERY_PRIORITY } from './deliveries.js'
import { createdKey, listMember } from './listing.js'
import { jobQueueName, queueKey } from './queues.js'
import { withPending } from './summary.js'
import type { DeliveryData, RedisJobData } from './view.js'

/** What an Idempotency-Key's Redis key holds. */
interface KeyClaim {
  fingerprint: string
  id: string
  createdAt: number
}

export async function submit(
  redis: RedisConnections,
  job: NewJob,
  idempotency?: IdempotencyClaim,
): Promise<Submitted> {
  redis.usable()
  if (idempotency === undefined) {
    await add(redis, job)
    await replicated(redis)
    return { id: job.id, createdAt: job.createdAt, replayed: false }
  }
  // SET NX decides which of racing requests with one key creates the job; the others answer with
  // its id. The key lives as long as a finished job's retention.
  const key = redis.key(`idempotency:${createHash('sha256').update(idempotency.key).digest('hex')}`)
  const claim: KeyClaim = { fingerprint: idempotency.fingerprint, id: job.id, createdAt: job.createdAt }
  let seen: KeyClaim | null = null
  try {
    const ttl = Math.ceil(redis.settings.ttlMs / 1000)
    for (let tries = 0; tries < 3 && seen === null; tries++) {
      if ((await redis.client.set(key, JSON.stringify(claim), 'EX', ttl, 'NX')) === 'OK') break
      const text = await redis.client.get(key)
      seen = text === null ? null : (JSON.parse(text) as KeyClaim)
    }
  } catch (error) {
    throw redis.failure(error)
  }
  if (seen === null) {
    try {
      await add(redis, job)
    } catch (error) {
      await redis.client.del(key).catch(() => undefined)
      throw error
    }
    await replicated(redis)
    return { id: job.id, createdAt: job.createdAt, replayed: false }
  }
  if (seen.fingerprint !== idempotency.fingerprint) throw new IdempotencyKeyReusedError()
  // The request that won may still be adding the job: answer once it exists (or 503 if it never does).
  // Its algorithm is this request's (the fingerprints match), its version maybe not (a canary's draw):
  // its queue is the index's, written before the job is added.
  const exists = async () => {
    const key = await redis.queues.indexed(seen.id).catch(() => null)
    return key !== null && (await redis.client.exists(redis.queues.jobKey(key, seen.id)).catch(() => 0)) === 1
  }
  for (let waited = 0; waited < 2000; waited += 20) {
    if (await exists()) break
    await sleep(20)
  }
  if (!(await exists())) {
    throw new StoreUnavailableError('The job of this Idempotency-Key was not created.')
  }
  return { id: seen.id, createdAt: seen.createdAt, replayed: true }
}

/** How long a new job waits for its replicas' acknowledgement before the answer is 503. */
export const REPLICA_WAIT_MS = 1000

/**
 * With minReplicas, waits (Redis's WAIT) until that many replicas hold the job's writes, so that a
 * failover after its 202 cannot lose it. WAIT covers the writes of the connection it is sent on: both
 * connections that wrote are asked. Past REPLICA_WAIT_MS the job exists on the primary but may be lost:
 * 503, and a retry with the same Idempotency-Key answers with that job rather than a second one.
 */
async function replicated(redis: RedisConnections): Promise<void> {
  const wanted = redis.settings.minReplicas ?? 0
  if (wanted === 0) return
  let acknowledged: number[]
  try {
    acknowledged = await Promise.all(
      [redis.client, redis.bullClient].map((connection) => connection.wait(wanted, REPLICA_WAIT_MS)),
    )
  } catch (error) {
    throw redis.failure(error)
  }
  if (Math.min(...acknowledged) < wanted) {
    throw new StoreUnavailableError(
      `The job was not acknowledged by ${wanted} Redis replica(s) within ${REPLICA_WAIT_MS} ms.`,
    )
  }
}

function jobOptions(redis: RedisConnections, job: NewJob): JobsOptions {
  const age = Math.ceil(redis.settings.ttlMs / 1000)
  return {
    jobId: job.id,
    timestamp: job.createdAt,
    // Runs on a thread that died are retried at once; the processor fails the job after
    // MAX_LOST_RUNS lost runs, of any kind, so BullMQ never gives up first.
    attempts: MAX_LOST_RUNS + 1,
    removeOnComplete: { age },
    removeOnFail: { age },
    stackTraceLimit: 0,
  }
}

async function add(redis: RedisConnections, job: NewJob): Promise<void> {
  const data: RedisJobData = {
    version: job.version,
    params: job.params,
    webhook: job.webhook,
    cheap: job.cheap,
  }
  if (job.trace !== undefined) data.trace = job.trace
  const { settings } = redis
  try {
    // BullMQ ignores an add with a taken id, and has no bounded queue: both are checked first, and
    // the bound is soft across API processes (docs/distributed.md).
    // The job's member in our sorted set (listing.ts) and its entry in the id → queue index
    // (queues.ts) are written before the add, in the same round trip as the checks: a refused or
    // failed add leaves a member whose job is missing, which a listing skips and removes; an add
    // without them cannot happen. Plain reads in one pipeline: one write to Redis, and no Lua script.
    const member = listMember(job)
    const { queues } = redis
    const key = queueKey(job.algorithm, job.version)
    const pipeline = redis.client.pipeline()
    queues.claimIndex(pipeline, job.id, key)
    const [pending, claimed, indexed] = await withPending(redis, pipeline.zadd(createdKey(redis), 0, member))
    if (claimed === 0) {
      // The id is indexed already: taken, unless its job is gone (expired, or never added).
      const other = indexed as string
      if ((await redis.client.exists(queues.jobKey(other, job.id))) === 1) {
        // The member names the other job's id: it goes, or the listing would show that job twice.
        await redis.client.zrem(createdKey(redis), member)
        throw new DuplicateJobIdError(job.id)
      }
      if (other !== key) await queues.reindex(job.id, key)
    }
    queues.remember(job.id, key)
    if (pending >= settings.maxPending)
      throw new StoreFullError(`${pending} jobs are waiting, the most allowed.`)
    if (job.webhook === null) {
      await queues.of(key).add(job.algorithm, data, jobOptions(redis, job))
      return
    }
    const age = Math.ceil(settings.ttlMs / 1000)
    const delivery: DeliveryData = {
      jobId: job.id,
      algorithm: job.algorithm,
      version: job.version,
      url: job.webhook,
      webhookId: newWebhookId(),
    }
    if (job.trace !== undefined) delivery.trace = job.trace
    await redis.flows.add({
      name: 'deliver',
      queueName: WEBHOOKS,
      data: delivery,
      opts: {
        jobId: job.id,
        priority: DELIVERY_PRIORITY.fresh,
        attempts: settings.retryWaitsMs.length + 1,
        backoff: { type: 'webhook' },
        removeOnComplete: { age },
        removeOnFail: { age },
        stackTraceLimit: 0,
      },
      children: [
        {
          name: job.algorithm,
          queueName: jobQueueName(key),
          data,
          opts: { ...jobOptions(redis, job), ignoreDependencyOnFailure: true },
        },
      ],
    })
  } catch (error) {
    throw redis.failure(error)
  }
}

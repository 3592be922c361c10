// Counting jobs on Redis: the one definition of pending (for the bound on waiting jobs, the gauges and
// the summary), the summary itself, and what a job end adds to the counts (the job metrics and the
// latency of its minute). Everything is read from counters BullMQ and we keep as jobs change.
import type { Metrics, WorkerOptions } from 'bullmq'
import type { ChainableCommander } from 'ioredis'
import type { JobCounts, JobEndStatus } from '../backend.js'
import {
  emptyMinute,
  type JobSummary,
  latencyBucket,
  MINUTE_MS,
  SUMMARY_MINUTES,
  summaryMinutes,
} from '../summary.js'
import type { RedisConnections } from './connections.js'
import { type JobQueue, nameOfKey } from './queues.js'
import { type RedisJob, recordOf, startOf } from './view.js'

/**
 * The job queues' Workers count ends by minute (BullMQ's metrics, in the script that ends a job), as
 * many minutes as the summary shows.
 */
export const JOB_METRICS: Partial<WorkerOptions> = { metrics: { maxDataPoints: SUMMARY_MINUTES } }

/** The queues of the deployment's algorithm versions (every one a process has named). */
function jobQueues(redis: RedisConnections): JobQueue[] {
  return redis.queues.known().map((key) => redis.queues.of(key))
}

/**
 * Runs `pipeline` with the pending count added at its end (in every version's queue, BullMQ's wait
 * list and its prioritized and delayed sets: the one definition of pending), and gives that count
 * first, then the pipeline's own answers. Throws the first error.
 */
export async function withPending(
  redis: RedisConnections,
  pipeline: ChainableCommander,
): Promise<[number, ...unknown[]]> {
  const queues = jobQueues(redis)
  for (const { keys } of queues) {
    pipeline
      .llen(keys.wait as string)
      .zcard(keys.prioritized as string)
      .zcard(keys.delayed as string)
  }
  const answers = await pipeline.exec()
  const failed = answers?.find(([error]) => error !== null)
  if (answers === null || failed !== undefined) throw failed?.[0] ?? new Error('no answer')
  const values = answers.map(([, value]) => value)
  const counted = 3 * queues.length
  const own = values.slice(0, values.length - counted)
  const pending = values
    .slice(values.length - counted)
    .reduce((sum: number, count) => sum + (count as number), 0)
  return [pending, ...own]
}

/** Adds `count`'s command for each of `queues` to `pipeline`. */
function perQueue(
  pipeline: ChainableCommander,
  queues: JobQueue[],
  count: (pipeline: ChainableCommander, queue: JobQueue) => void,
): ChainableCommander {
  for (const queue of queues) count(pipeline, queue)
  return pipeline
}

/** The sum of `queues` consecutive numeric answers starting at `from`. */
const sumOf = (values: unknown[], from: number, queues: number): number =>
  values.slice(from, from + queues).reduce((sum: number, value) => sum + Number(value ?? 0), 0)

/**
 * The gauges' counts, by algorithm from the queues of its versions: pending as withPending counts it, running
 * by its active list (a job a worker took counts as running there, even while it waits in that worker for
 * a thread or a process of its algorithm).
 */
export async function counts(redis: RedisConnections): Promise<JobCounts> {
  const queueKeys = redis.queues.known()
  const pipeline = redis.client.pipeline()
  for (const { keys } of queueKeys.map((key) => redis.queues.of(key))) {
    pipeline
      .llen(keys.wait as string)
      .zcard(keys.prioritized as string)
      .zcard(keys.delayed as string)
      .llen(keys.active as string)
  }
  const answers = await pipeline.exec()
  const failed = answers?.find(([error]) => error !== null)
  if (answers === null || failed !== undefined) throw failed?.[0] ?? new Error('no answer')
  const values = answers.map(([, value]) => Number(value ?? 0))
  const byAlgorithm = new Map<string, { waiting: number; running: number }>()
  let waiting = 0
  let running = 0
  queueKeys.forEach((key, i) => {
    const [wait = 0, prioritized = 0, delayed = 0, active = 0] = values.slice(4 * i, 4 * i + 4)
    const name = nameOfKey(key)
    const counts = byAlgorithm.get(name) ?? { waiting: 0, running: 0 }
    counts.waiting += wait + prioritized + delayed
    counts.running += active
    byAlgorithm.set(name, counts)
    waiting += wait + prioritized + delayed
    running += active
  })
  return { waiting, running, byAlgorithm }
}

/**
 * Counts by state from BullMQ's lists and sets, in one pipeline: pending as withPending counts it,
 * running by its active list; its finished sets are scored by finishedOn, so those past their
 * retention (which a read shows as gone, and the sweeper removes later) are left out by score
 * (O(log n)). Ends per minute from BullMQ's metrics; latencies from our hash of each minute
 * (countEnd). A waiting job marked cancelled counts as pending until its cancel has taken it (moments).
 */
export async function summary(redis: RedisConnections, now: number): Promise<JobSummary> {
  const since = now - redis.settings.ttlMs
  const minutes = summaryMinutes(now)
  const queues = jobQueues(redis)
  const n = queues.length
  const batch = redis.client.pipeline()
  perQueue(batch, queues, (pipeline, { keys }) => pipeline.llen(keys.active as string))
  perQueue(batch, queues, (pipeline, { keys }) =>
    pipeline.zcount(keys.completed as string, `(${since}`, '+inf'),
  )
  perQueue(batch, queues, (pipeline, { keys }) => pipeline.zcount(keys.failed as string, `(${since}`, '+inf'))
  for (const minute of minutes) batch.hgetall(latencyKey(redis, minute))
  const [[pending, ...values], completed, failed] = await Promise.all([
    withPending(redis, batch),
    Promise.all(queues.map((queue) => queue.getMetrics('completed', 0, SUMMARY_MINUTES - 1))),
    Promise.all(queues.map((queue) => queue.getMetrics('failed', 0, SUMMARY_MINUTES - 1))),
  ])
  return {
    counts: {
      pending,
      running: sumOf(values, 0, n),
      completed: sumOf(values, n, n),
      failed: sumOf(values, 2 * n, n),
    },
    ended: minutes.map((minute, i) => {
      const ends = emptyMinute(minute)
      ends.completed = completed.reduce((sum, metrics) => sum + endsIn(metrics, minute), 0)
      ends.failed = failed.reduce((sum, metrics) => sum + endsIn(metrics, minute), 0)
      const hash = (values[3 * n + i] ?? {}) as Record<string, string>
      ends.latency = ends.latency.map((_, bucket) => Number(hash[`b${bucket}`] ?? 0))
      ends.latencySumMs = Number(hash.sum_ms ?? 0)
      return ends
    }),
  }
}

/**
 * A job end this process stored (a worker's, or a cancel's): the job metrics with its run time, and
 * its latency (creation to end, as a read shows them) in the hash of the minute BullMQ's metrics count
 * it in (finishedOn's). Written after the end, not with it: a process that dies in between leaves the
 * job out of the latencies (docs/jobs.md, summary).
 */
export function countEnd(redis: RedisConnections, job: RedisJob, status: JobEndStatus): void {
  const seconds = ((job.finishedOn ?? Date.now()) - (startOf(job) ?? job.processedOn ?? Date.now())) / 1000
  redis.settings.countEnded(job.name, status, Math.max(0, seconds))
  const record = recordOf(job, status, Number.POSITIVE_INFINITY, 0)
  if (job.finishedOn === undefined || record?.completedAt == null) return
  const latency = Math.max(0, record.completedAt - record.createdAt)
  const key = latencyKey(redis, Math.floor(job.finishedOn / MINUTE_MS) * MINUTE_MS)
  redis.client
    .pipeline()
    .hincrby(key, `b${latencyBucket(latency)}`, 1)
    .hincrby(key, 'sum_ms', latency)
    .expire(key, ((SUMMARY_MINUTES + 1) * MINUTE_MS) / 1000)
    .exec()
    .then((answers) => {
      const failed = answers?.find(([error]) => error !== null)
      if (answers === null || failed !== undefined) throw failed?.[0] ?? new Error('no answer')
    })
    .catch((error: unknown) =>
      redis.log.warn({ err: error, job_id: job.id }, "a job's latency was not counted in the summary"),
    )
}

const latencyKey = (redis: RedisConnections, minute: number): string =>
  redis.key(`latency:${minute / MINUTE_MS}`)

/**
 * The jobs that ended in `minute` by BullMQ's metrics: a data point is written for each whole minute
 * once a job ends in a later one (the newest first, the one before prevTS's minute at 0, zeros for
 * minutes without an end), and the ends of prevTS's minute so far are count - prevCount.
 */
function endsIn(metrics: Metrics, minute: number): number {
  const { count, prevTS, prevCount } = metrics.meta
  const last = Math.floor(prevTS / MINUTE_MS)
  const at = minute / MINUTE_MS
  if (at > last) return 0
  if (at === last) return count - prevCount
  return metrics.data[last - 1 - at] ?? 0
}

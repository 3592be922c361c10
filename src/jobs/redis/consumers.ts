// Running jobs from Redis: a BullMQ Worker on the queue of each algorithm version this process serves
// takes them, holds their locks and finds the runs of dead workers (the stalled checker); its processor
// runs each job (../execute.ts) on the version it is pinned to and says how it ended in BullMQ's terms.
// The Workers follow reloads: a version loaded since gets its own, one no longer loaded finishes its runs
// and takes no more. Also how any BullMQ Worker of ours stops at a shutdown.
import { setMaxListeners } from 'node:events'
import { UnrecoverableError, WaitingError, type Worker } from 'bullmq'
import type { FastifyBaseLogger } from 'fastify'
import { CANCEL_REASON, JOB_CANCELLED, LockLostAbort, ShutdownAbort } from '../../errors.js'
import { tracing } from '../../tracing/seams.js'
import type { ConsumeJobsOptions, Consumer, JobEndStatus, RunJob } from '../backend.js'
import { type JobOutcome, type JobRecord, lostRunsError, MAX_LOST_RUNS } from '../job.js'
import { WORKER } from '../job-end.js'
import { throttledProgress } from '../progress.js'
import { randomHex } from '../random-hex.js'
import { type RedisConnections, settledWithin } from './connections.js'
import type { JobEvents } from './events.js'
import { isLegacyKey, jobQueueName, queueKey } from './queues.js'
import { countEnd, JOB_METRICS } from './summary.js'
import {
  lostRunOf,
  type RedisJob,
  type RedisJobData,
  type RedisJobResult,
  recordOf,
  type StoredProgress,
  type StoredStart,
} from './view.js'

/** The name of the BullMQ Workers that run jobs (not those that only fetch cancelled ones): counted. */
export const RUNNER = 'runner'

/**
 * This process's mark in its runners' connection names (`runner.<mark>`): a process with several
 * versions of one algorithm has a connection per version, and counts once for the algorithm.
 */
export const RUNNER_MARK = randomHex(6)

/** How long a stop waits, after the grace period, for work to be given back before closing anyway. */
const FORCE_CLOSE_AFTER_MS = 2000

export function consumeJobs(
  redis: RedisConnections,
  events: JobEvents,
  runJob: RunJob,
  options: ConsumeJobsOptions,
): Consumer {
  const shutdown = shutdownOfRuns()
  const process = async (job: RedisJob, token: string | undefined, signal: AbortSignal) => {
    // Taken over from a dead worker, whose run could not trace itself: traced here. A run of this
    // process that lost its lock traced itself.
    const lostRun = lostRunOf(job, job.processedOn ?? Date.now())
    if (lostRun !== undefined && lostRun.worker !== WORKER) tracing.lost(lostRun)
    // Runs lost to dead workers (stalls) and to dead threads (retries) count alike.
    const lost = job.stalledCounter + job.attemptsMade
    // Cancelled while it waited (or just as it was taken): it fails without running.
    if (job.data.cancelledAt !== undefined || events.cancelled(job.id as string)) {
      throw new UnrecoverableError(JOB_CANCELLED)
    }
    if (lost >= MAX_LOST_RUNS) throw new UnrecoverableError(lostRunsError(lost))
    const record = recordOf(job, 'active', redis.settings.ttlMs, Date.now()) as JobRecord
    // Queued before versions: it runs on the default version of this process, which its metadata tells.
    if (record.version === '') record.version = options.loaded.defaultOf(record.algorithm)?.version ?? ''
    const run = record.runs
    // Its start, then its progress, stored on the job (BullMQ's progress, which every process's
    // QueueEvents hears of) with its run; every update carries the start, which it replaces.
    let start: StoredStart | undefined
    const progress = throttledProgress(
      (update) => job.updateProgress({ ...update, ...start, run } satisfies StoredProgress),
      (error) => redis.log.debug({ err: error, job_id: job.id }, 'could not store a job progress'),
    )
    // A cheap job runs inline as it is taken, and reads running from then on (view.ts).
    const started = job.data.cheap
      ? undefined
      : () => {
          start = { run, startedAt: Date.now(), worker: WORKER, stalls: job.stalledCounter }
          job
            .updateProgress(start)
            .catch((error: unknown) =>
              redis.log.debug({ err: error, job_id: job.id }, 'could not store a job start'),
            )
        }
    let outcome: JobOutcome
    try {
      outcome = await runJob(record, signal, progress.report, started).finally(() => progress.stop())
    } catch (error) {
      if (error instanceof ShutdownAbort) {
        await job.moveToWait(token)
        throw new WaitingError()
      }
      if (error instanceof LockLostAbort) throw error
      redis.log.error({ err: error, job_id: job.id }, 'a job run was lost (its worker died); it runs again')
      throw new Error('the worker thread running the job died')
    }
    if (outcome.status === 'failed') throw new UnrecoverableError(outcome.error)
    return [outcome.result, outcome.metadata] as RedisJobResult
  }
  // Told once BullMQ has stored the end, after the run: in the run's span (or the job's trace).
  const ended = (job: RedisJob, status: JobEndStatus) =>
    tracing.ended({ id: job.id as string, attempt: job.attemptsStarted, trace: job.data.trace }, () => {
      countEnd(redis, job, status)
      options.logEnd?.({
        id: job.id as string,
        algorithm: job.name,
        status,
        attempt: job.attemptsStarted,
        durationMs: Math.max(0, (job.finishedOn ?? Date.now()) - (job.processedOn ?? Date.now())),
      })
    })
  // Each version's Worker takes up to its declared `concurrency` of its jobs, or the process's: a backlog
  // of one waits in its own queue while the others' jobs are taken.
  const workers = new Map<string, Worker<RedisJobData, RedisJobResult>>()
  const start = (key: string, concurrency: number) => {
    const worker = redis.worker<RedisJobData, RedisJobResult>(
      jobQueueName(key),
      concurrency,
      process,
      { ...JOB_METRICS, name: `${RUNNER}.${RUNNER_MARK}` },
      redis.log,
      shutdown.signal,
    )
    worker.on('completed', (job) => ended(job, 'completed'))
    worker.on('failed', (job) => {
      // Also emitted for a run that is retried; only a final failure has finishedOn.
      if (job?.finishedOn) ended(job, 'failed')
    })
    workers.set(key, worker)
  }
  // The queues this process takes from now: each loaded version's of the algorithms it serves, and the
  // queue of an algorithm's jobs queued before versions while the deployment has one (a process of a
  // release before versions named it).
  const wanted = () => {
    const keys = new Map<string, number>()
    const known = new Set(redis.queues.known())
    for (const name of options.algorithms) {
      const versions = options.loaded.versions(name)
      for (const { version, concurrency } of versions)
        keys.set(queueKey(name, version), concurrency ?? options.concurrency)
      if (versions.length > 0 && known.has(name)) keys.set(name, options.concurrency)
    }
    return keys
  }
  for (const [key, concurrency] of wanted()) start(key, concurrency)
  // Stopped versions finish their runs (and hear their cancels): closed without the shutdown's abort.
  const retiring = new Set<Worker<RedisJobData, RedisJobResult>>()
  const retired: Promise<void>[] = []
  let stopped = false
  options.loaded.onChange(() => {
    if (stopped) return
    const next = wanted()
    const fresh = [...next.keys()].filter((key) => !workers.has(key))
    for (const [key, worker] of workers) {
      if (next.has(key) || isLegacyKey(key)) continue
      workers.delete(key)
      retiring.add(worker)
      retired.push(
        worker
          .close()
          .catch((error: unknown) => redis.log.warn({ err: error }, 'a worker did not close'))
          .finally(() => retiring.delete(worker)),
      )
    }
    for (const key of fresh) start(key, next.get(key) as number)
  })
  // Cancels reach this process through its QueueEvents; the run is in one of the Workers.
  events.stopRun = (id) => {
    for (const worker of [...workers.values(), ...retiring]) worker.cancelJob(id, CANCEL_REASON)
  }
  events
    .subscribeCancels()
    .catch((error: unknown) => redis.log.error({ err: error }, 'could not listen for job cancels'))
  return {
    get running() {
      return !stopped && [...workers.values()].every((worker) => worker.isRunning())
    },
    async stop(graceMs: number) {
      stopped = true
      await Promise.all([
        ...[...workers.values()].map((worker) => bullConsumer(worker, shutdown, redis.log).stop(graceMs)),
        ...retired,
      ])
    },
  }
}

/**
 * What aborts a consumer's runs at the end of a stop's grace period. Each run in flight listens to it
 * until its end (lock-watch.ts): as many listeners as runs, which Node would warn of past ten.
 */
export function shutdownOfRuns(): AbortController {
  const shutdown = new AbortController()
  setMaxListeners(0, shutdown.signal)
  return shutdown
}

/** Several consumers as one: running while all are, stopped together. */
export function allOf(consumers: Consumer[]): Consumer {
  return {
    get running() {
      return consumers.every((consumer) => consumer.running)
    },
    async stop(graceMs: number) {
      await Promise.all(consumers.map((consumer) => consumer.stop(graceMs)))
    },
  }
}

/**
 * A BullMQ Worker as a Consumer: at a stop, work in flight gets the grace period, then is aborted and
 * given back. A close still waiting FORCE_CLOSE_AFTER_MS after that (Redis away, so nothing can be given
 * back) is left behind: a job it held stalls and runs again elsewhere. Its close cannot be forced
 * instead: BullMQ's close(true) returns the first close's promise.
 */
export function bullConsumer(worker: Worker, shutdown: AbortController, log: FastifyBaseLogger): Consumer {
  let stopping = false
  return {
    get running() {
      return !stopping && worker.isRunning()
    },
    async stop(graceMs: number) {
      stopping = true
      const giveBack = setTimeout(() => shutdown.abort(new ShutdownAbort('shutting down')), graceMs)
      let closed = false
      await settledWithin(graceMs + FORCE_CLOSE_AFTER_MS, [
        worker.close().finally(() => {
          closed = true
        }),
      ])
      clearTimeout(giveBack)
      if (!closed) log.warn({ queue: worker.name }, 'Redis did not answer: the worker stops without it')
    },
  }
}

// The embedded backend: jobs and deliveries in a store this process alone uses (`sqlite-store.ts`,
// one SQLite file), run by this process's job runner and webhook dispatcher, which wake each other (a
// job created wakes the runner, a job ended with a webhook wakes the dispatcher).
import { EventEmitter } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Registry } from '../../algorithms/registry.js'
import { tracing } from '../../tracing/seams.js'
import type { AttemptDelivery } from '../../webhooks/attempt.js'
import { ReceiverPace } from '../../webhooks/receiver-pace.js'
import type {
  BackendCapabilities,
  BackendOptions,
  CancelResult,
  ConsumeDeliveriesOptions,
  ConsumeJobsOptions,
  Consumer,
  IdempotencyClaim,
  JobBackend,
  JobCounts,
  JobEndStatus,
  RunJob,
  Submitted,
} from '../backend.js'
import { afterCancel, beforeCancel, CANCEL_WAIT_MS, settledBy } from '../cancel.js'
import { type DeliveryHistory, deliveryHistory } from '../deliveries.js'
import { isEnded, type JobRecord, type NewJob } from '../job.js'
import type { JobListPage, JobListQuery } from '../listing.js'
import { followVersions } from '../loaded-versions.js'
import type { JobSummary } from '../summary.js'
import { WebhookDispatcher, webhookDelivery } from './dispatcher.js'
import { JobRunner } from './runner.js'
import { SqliteJobStore, type SqliteStoreOptions } from './sqlite-store.js'
import type { JobStore } from './store.js'

export interface EmbeddedBackendOptions extends BackendOptions {
  store: JobStore
}

/**
 * The embedded backend on the SQLite store in `dataDir` (which it opens, creating or migrating it);
 * `defaultVersion` pins the jobs an earlier release left (SqliteStoreOptions).
 */
export function openEmbeddedBackend(
  options: BackendOptions & Pick<SqliteStoreOptions, 'dataDir' | 'defaultVersion'>,
): EmbeddedBackend {
  const store = SqliteJobStore.open({
    dataDir: options.dataDir,
    ttlMs: options.ttlMs,
    maxPending: options.maxPending,
    makeDelivery: webhookDelivery,
    defaultVersion: options.defaultVersion,
  })
  return new EmbeddedBackend({ ...options, store })
}

export class EmbeddedBackend implements JobBackend {
  readonly capabilities: BackendCapabilities = { shared: false }
  readonly #store: JobStore
  readonly #o: EmbeddedBackendOptions
  #runner: JobRunner | undefined
  #served: readonly string[] = []
  #versions: () => readonly string[] = () => []
  #dispatcher: WebhookDispatcher | undefined
  // Every job end and change in this process (the only one using the store): waiters and streams of
  // job events listen here.
  readonly #ended = new EventEmitter().setMaxListeners(0)

  constructor(options: EmbeddedBackendOptions) {
    this.#o = options
    this.#store = options.store
  }

  async submit(job: NewJob, idempotency?: IdempotencyClaim): Promise<Submitted> {
    const submitted = await this.#store.submit(job, idempotency)
    if (!submitted.replayed) this.#runner?.notifyCommitted()
    return submitted
  }

  async cancel(id: string, now: number): Promise<CancelResult> {
    const job = await this.#store.read(id, now)
    const ended = beforeCancel(job)
    if (ended !== null) return ended
    if (job?.status === 'pending') {
      const cancelled = await this.#store.cancelPending(id, now)
      if (cancelled !== null) {
        // A failed job that ran for no time, as the Redis backend counts it. No run tells this change.
        this.#jobEnded(cancelled, 'failed', 0)
        this.#ended.emit('changed', id)
        return { kind: 'cancelled', job: cancelled }
      }
      // Claimed meanwhile: it is running now.
    }
    // Running here (the store has one process): abort the run and wait for its end to be stored. Just
    // after a claim the runner may not hold the run yet: then it is looked for again, briefly.
    const deadline = Date.now() + CANCEL_WAIT_MS
    for (;;) {
      const stopped = this.#runner?.cancel(id)
      if (stopped != null) {
        await settledBy(stopped, deadline)
        return afterCancel(await this.#store.read(id, Date.now()))
      }
      const after = await this.#store.read(id, Date.now())
      if (after === null || isEnded(after.status) || Date.now() >= deadline) return afterCancel(after)
      await sleep(20)
    }
  }

  async list(query: JobListQuery, now: number): Promise<JobListPage> {
    const page = await this.#store.list(query, now)
    return { ...page, jobs: page.jobs.map((job) => this.#withProgress(job) as JobRecord) }
  }

  summary(now: number): Promise<JobSummary> {
    return this.#store.summary(now)
  }

  async deliveries(id: string, now: number): Promise<DeliveryHistory | null> {
    const job = await this.#store.read(id, now)
    return job === null ? null : deliveryHistory(job, await this.#store.delivery(job))
  }

  async onEnded(listener: (id: string) => void): Promise<void> {
    this.#ended.on('ended', listener)
  }

  async onChanged(listener: (id: string) => void): Promise<void> {
    this.#ended.on('changed', listener)
  }

  async read(id: string, now: number): Promise<JobRecord | null> {
    return this.#withProgress(await this.#store.read(id, now))
  }

  counts(): Promise<JobCounts> {
    return this.#store.counts()
  }

  ping(): Promise<boolean> {
    return this.#store.ping()
  }

  /** This process is the one that runs every job, once it runs them: by name, and by versionKey. */
  async workers(): Promise<ReadonlyMap<string, number>> {
    const running = this.#runner?.running === true ? 1 : 0
    return new Map([...this.#served, ...this.#versions()].map((key) => [key, running]))
  }

  /** Every loaded version of what it serves, by versionKey. */
  async versionWorkers(): Promise<ReadonlyMap<string, number>> {
    const running = this.#runner?.running === true ? 1 : 0
    return new Map(this.#versions().map((key) => [key, running]))
  }

  /** Its one process runs every job: GET /algorithms counts it for the names a reload added too. */
  algorithmsChanged(algorithms: Registry): void {
    if (this.#runner !== undefined) this.#served = algorithms.names()
  }

  consumeJobs(run: RunJob, options: ConsumeJobsOptions): Consumer {
    this.#served = options.algorithms
    const { keys: versions, concurrencyOf } = followVersions(options.loaded)
    this.#versions = versions
    const runner = new JobRunner({
      store: this.#store,
      run,
      log: this.#o.log,
      concurrency: options.concurrency,
      concurrencyOf,
      versions,
      // Told once the store has the end, after the run: in the run's span (or the job's trace).
      onEnded: (job, status, seconds) =>
        tracing.ended({ id: job.id, attempt: job.runs, trace: job.trace }, () => {
          this.#jobEnded(job, status, seconds)
          const durationMs = Math.round(seconds * 1000)
          const { id, algorithm, version, runs: attempt } = job
          options.logEnd?.({ id, algorithm, version, status, attempt, durationMs })
        }),
      onChanged: (id) => this.#ended.emit('changed', id),
    })
    this.#runner = runner
    runner.start()
    return runner
  }

  consumeDeliveries(send: AttemptDelivery, options: ConsumeDeliveriesOptions): Consumer {
    const dispatcher = new WebhookDispatcher({
      store: this.#store,
      send,
      log: options.log,
      retryWaitsMs: this.#o.retryWaitsMs,
      maxInFlight: options.maxInFlight,
      pace: options.pace ?? new ReceiverPace(),
      onAttempt: options.onAttempt,
    })
    this.#dispatcher = dispatcher
    dispatcher.start()
    return dispatcher
  }

  expire(now: number): Promise<number> {
    return this.#store.expire(now)
  }

  close(): Promise<void> {
    return this.#store.close()
  }

  /** A running job's record with its run's latest progress. */
  #withProgress(job: JobRecord | null): JobRecord | null {
    if (job?.status !== 'running' || this.#runner === undefined) return job
    const progress = this.#runner.progressOf(job.id)
    return progress === null ? job : { ...job, progress }
  }

  /** A job end this process stored: counted, told to waiters, and its webhook's delivery woken. */
  #jobEnded(job: JobRecord, status: JobEndStatus, seconds: number): void {
    this.#o.countEnded(job.algorithm, status, seconds)
    this.#ended.emit('ended', job.id)
    if (job.webhook !== null) this.#dispatcher?.notify()
  }
}

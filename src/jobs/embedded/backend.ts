// The embedded backend: jobs and deliveries in one SQLite file (`sqlite-store.ts`), run by this
// process's job runner and webhook dispatcher, which wake each other (a job created wakes the runner,
// a job ended with a webhook wakes the dispatcher).
import { EventEmitter } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { JOB_CANCELLED } from '../../errors.js'
import { webhookDelivery } from '../../webhooks/payload.js'
import type {
  AttemptDelivery,
  CancelResult,
  ConsumeDeliveriesOptions,
  ConsumeJobsOptions,
  Consumer,
  CountEnded,
  IdempotencyClaim,
  JobBackend,
  JobCounts,
  RunJob,
  Submitted,
} from '../backend.js'
import type { DeliveryHistory } from '../deliveries.js'
import type { JobListPage, JobListQuery } from '../listing.js'
import type { JobSummary } from '../summary.js'
import { WebhookDispatcher } from './dispatcher.js'
import { JobRunner } from './runner.js'
import { SqliteJobStore } from './sqlite-store.js'
import type { JobRecord, NewJob } from './store.js'

export interface EmbeddedBackendOptions {
  dataDir: string
  ttlMs: number
  maxPending: number
  retryWaitsMs: readonly number[]
  countEnded: CountEnded
  log: FastifyBaseLogger
}

export class EmbeddedBackend implements JobBackend {
  readonly kind = 'embedded'
  readonly store: SqliteJobStore
  readonly #o: EmbeddedBackendOptions
  #runner: JobRunner | undefined
  #dispatcher: WebhookDispatcher | undefined
  // Every job end in this process (the only one using the store): waiters listen here.
  readonly #ended = new EventEmitter().setMaxListeners(0)

  constructor(options: EmbeddedBackendOptions) {
    this.#o = options
    this.store = SqliteJobStore.open({
      dataDir: options.dataDir,
      ttlMs: options.ttlMs,
      maxPending: options.maxPending,
      makeDelivery: webhookDelivery,
    })
  }

  async submit(job: NewJob, idempotency?: IdempotencyClaim): Promise<Submitted> {
    const submitted = await this.store.submit(job, idempotency)
    if (!submitted.replayed) this.#runner?.notify()
    return submitted
  }

  async cancel(id: string, now: number): Promise<CancelResult> {
    const job = await this.store.read(id, now)
    if (job === null) return { kind: 'not_found' }
    if (job.status === 'completed' || job.status === 'failed') return { kind: 'finished', job }
    if (job.status === 'pending') {
      const cancelled = await this.store.cancelPending(id, now)
      if (cancelled !== null) {
        // Counted as a failed job that ran for no time, as the Redis backend counts it.
        this.#o.countEnded(cancelled.algorithm, 'failed', 0)
        this.#ended.emit('ended', id)
        if (cancelled.webhook !== null) this.#dispatcher?.notify()
        return { kind: 'cancelled', job: cancelled }
      }
      // Claimed meanwhile: it is running now.
    }
    // Running here (the store has one process): abort the run and wait for its end to be stored. Just
    // after a claim the runner may not hold the run yet: then it is looked for again, briefly.
    let ended: JobRecord | null = job
    for (let tries = 0; tries < 50; tries++) {
      if (await this.#runner?.cancel(id)) {
        ended = await this.store.read(id, Date.now())
        break
      }
      ended = await this.store.read(id, Date.now())
      if (ended?.status !== 'running') break
      await sleep(20)
    }
    if (ended === null) return { kind: 'not_found' }
    if (ended.status === 'running') return { kind: 'stopping', job: ended }
    if (ended.status === 'failed' && ended.error === JOB_CANCELLED) return { kind: 'cancelled', job: ended }
    return { kind: 'finished', job: ended }
  }

  list(query: JobListQuery, now: number): Promise<JobListPage> {
    return this.store.list(query, now)
  }

  summary(now: number): Promise<JobSummary> {
    return this.store.summary(now)
  }

  async deliveries(id: string, now: number): Promise<DeliveryHistory | null> {
    const job = await this.store.read(id, now)
    return job === null ? null : this.store.deliveryHistory(job)
  }

  async onEnded(listener: (id: string) => void): Promise<void> {
    this.#ended.on('ended', listener)
  }

  read(id: string, now: number): Promise<JobRecord | null> {
    return this.store.read(id, now)
  }

  countPending(): Promise<number> {
    return this.store.countPending()
  }

  async counts(): Promise<JobCounts> {
    const [waiting, running] = await Promise.all([this.store.countPending(), this.store.countRunning()])
    return { waiting, running }
  }

  ping(): Promise<boolean> {
    return this.store.ping()
  }

  consumeJobs(run: RunJob, options: ConsumeJobsOptions): Consumer {
    const runner = new JobRunner({
      store: this.store,
      run,
      log: this.#o.log,
      concurrency: options.concurrency,
      onEnded: (job, status, seconds) => {
        this.#o.countEnded(job.algorithm, status, seconds)
        this.#ended.emit('ended', job.id)
        if (job.webhook !== null) this.#dispatcher?.notify()
      },
    })
    this.#runner = runner
    runner.start()
    return runner
  }

  consumeDeliveries(attempt: AttemptDelivery, options: ConsumeDeliveriesOptions): Consumer {
    const dispatcher = new WebhookDispatcher({
      store: this.store,
      attempt,
      log: this.#o.log,
      retryWaitsMs: this.#o.retryWaitsMs,
      maxInFlight: options.maxInFlight,
      onAttempt: options.onAttempt,
    })
    this.#dispatcher = dispatcher
    dispatcher.start()
    return dispatcher
  }

  expire(now: number): Promise<number> {
    return this.store.expire(now)
  }

  close(): Promise<void> {
    return this.store.close()
  }
}

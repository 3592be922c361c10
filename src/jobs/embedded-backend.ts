// The embedded backend: jobs and deliveries in one SQLite file (`sqlite-store.ts`), run by this
// process's job runner and webhook dispatcher, which wake each other (a job created wakes the runner,
// a job ended with a webhook wakes the dispatcher).
import type { FastifyBaseLogger } from 'fastify'
import { WebhookDispatcher } from '../webhooks/dispatcher.js'
import { webhookDelivery } from '../webhooks/payload.js'
import type {
  AttemptDelivery,
  ConsumeDeliveriesOptions,
  ConsumeJobsOptions,
  Consumer,
  JobBackend,
  JobCounts,
  RunJob,
} from './backend.js'
import { JobRunner } from './runner.js'
import { SqliteJobStore } from './sqlite-store.js'
import type { JobRecord, NewJob } from './store.js'

export interface EmbeddedBackendOptions {
  dataDir: string
  ttlMs: number
  maxPending: number
  retryWaitsMs: readonly number[]
  log: FastifyBaseLogger
}

export class EmbeddedBackend implements JobBackend {
  readonly kind = 'embedded'
  readonly store: SqliteJobStore
  readonly #o: EmbeddedBackendOptions
  #runner: JobRunner | undefined
  #dispatcher: WebhookDispatcher | undefined

  constructor(options: EmbeddedBackendOptions) {
    this.#o = options
    this.store = SqliteJobStore.open({
      dataDir: options.dataDir,
      ttlMs: options.ttlMs,
      maxPending: options.maxPending,
      makeDelivery: webhookDelivery,
    })
  }

  async submit(job: NewJob): Promise<void> {
    await this.store.create(job)
    this.#runner?.notify()
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
        options.onEnded(job.algorithm, status, seconds)
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

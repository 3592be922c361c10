// The embedded job runner: takes pending jobs from the store in creation order and runs them
// (`../execute.ts`), at most `concurrency` of those holding a worker thread at a time, and of a version
// of an algorithm that declares its own `concurrency`, at most that many; only the jobs of the versions
// loaded now (the others wait).
import type { FastifyBaseLogger } from 'fastify'
import { CANCEL_REASON, ShutdownAbort } from '../../errors.js'
import type { JobEndStatus, RunJob } from '../backend.js'
import type { JobProgress, JobRecord } from '../job.js'
import { jobVersionKey } from '../pinned.js'
import { type ProgressWriter, throttledProgress } from '../progress.js'
import type { JobStore } from './store.js'
import { type Batch, WorkLoop } from './work-loop.js'

export interface RunnerOptions {
  store: JobStore
  run: RunJob
  log: FastifyBaseLogger
  concurrency: number
  /**
   * The versions (versionKey) that declare their own `concurrency`: at most that many of their jobs run
   * at once.
   */
  concurrencyOf?: ReadonlyMap<string, number>
  /** The versions (versionKey) whose jobs it takes, read at each take; absent, every one. */
  versions?: () => readonly string[]
  /** Called once a job's end is stored. */
  onEnded(job: JobRecord, status: JobEndStatus, seconds: number): void
  /** Called once a job's start, give-back or end is stored, with its id. */
  onChanged(id: string): void
}

// Claimed in batches, and between batches the event loop serves HTTP: a backlog of cheap jobs, which
// run inline, must not hold it. `concurrency` bounds the jobs holding a worker thread; a cheap job
// ends within the batch that claimed it.
const CLAIM_BATCH = 64

export class JobRunner extends WorkLoop<JobRecord> {
  readonly #o: RunnerOptions
  // Jobs holding a worker thread now; `concurrency` bounds them.
  #heavy = 0
  // Jobs running now of each version that declares a `concurrency`, by versionKey.
  readonly #running = new Map<string, number>()
  // The latest progress of each run in flight that has reported some.
  readonly #progress = new Map<string, JobProgress>()

  constructor(options: RunnerOptions) {
    super(options.log)
    this.#o = options
  }

  protected async take(): Promise<Batch<JobRecord>> {
    try {
      const room = new Map<string, number>()
      for (const [key, most] of this.#o.concurrencyOf ?? [])
        room.set(key, most - (this.#running.get(key) ?? 0))
      const served = this.#o.versions?.()
      const limits = { jobs: CLAIM_BATCH, heavy: this.#o.concurrency - this.#heavy, room, served }
      const items = await this.#o.store.claim(limits, Date.now())
      return { items, more: items.length === CLAIM_BATCH }
    } catch (error) {
      this.log.error({ err: error }, 'could not claim jobs')
      return { items: [], more: false }
    }
  }

  protected async handle(job: JobRecord, shutdown: AbortSignal): Promise<void> {
    const key = jobVersionKey(job)
    const counted = this.#o.concurrencyOf?.has(key) === true
    if (counted) this.#running.set(key, (this.#running.get(key) ?? 0) + 1)
    if (!job.cheap) this.#heavy++
    try {
      await this.#runOnce(job, shutdown)
    } finally {
      if (!job.cheap) this.#heavy--
      if (counted) this.#running.set(key, (this.#running.get(key) as number) - 1)
    }
  }

  /** The latest progress of job `id`'s run here, or null. */
  progressOf(id: string): JobProgress | null {
    return this.#progress.get(id) ?? null
  }

  /**
   * Aborts the run of job `id` as cancelled (through the signal its handling was given, which a shutdown
   * aborts too); gives a promise that resolves once its end is stored, or null when no run of it is held
   * here.
   */
  cancel(id: string): Promise<void> | null {
    return this.abortItem(id, CANCEL_REASON)
  }

  async #runOnce(job: JobRecord, shutdown: AbortSignal): Promise<void> {
    // Its progress is kept here, in memory, while it runs: this process alone runs the store's jobs,
    // and a run that dies with the process starts again from nothing.
    const progress = throttledProgress(
      (update) => {
        this.#progress.set(job.id, update)
        this.#o.onChanged(job.id)
      },
      () => {},
    )
    this.#o.onChanged(job.id)
    try {
      await this.#runAndStore(job, shutdown, progress)
    } finally {
      this.#progress.delete(job.id)
      this.#o.onChanged(job.id)
    }
  }

  async #runAndStore(job: JobRecord, shutdown: AbortSignal, progress: ProgressWriter): Promise<void> {
    const { store } = this.#o
    let startedAt = job.startedAt ?? Date.now()
    const ended = (status: JobEndStatus) => this.#o.onEnded(job, status, (Date.now() - startedAt) / 1000)
    // A cheap job was begun by its claim; any other when its thread or process takes it.
    const started =
      job.startedAt !== null
        ? undefined
        : () => {
            startedAt = Date.now()
            store.begin(job.id, job.runs, startedAt).then(
              () => this.#o.onChanged(job.id),
              (error: unknown) =>
                this.log.error({ err: error, job_id: job.id }, 'could not store a job start'),
            )
          }
    let outcome: Awaited<ReturnType<RunJob>>
    try {
      outcome = await this.#o.run(job, shutdown, progress.report, started).finally(() => progress.stop())
    } catch (error) {
      try {
        if (error instanceof ShutdownAbort) {
          await store.release(job.id, job.runs)
        } else {
          this.log.error(
            { err: error, job_id: job.id },
            'a job run was lost (its worker died); it runs again',
          )
          const state = await store.loseRun(job.id, job.runs, Date.now())
          if (state === 'failed') ended('failed')
        }
      } catch (storeError) {
        this.log.error(
          { err: storeError, job_id: job.id },
          'could not put a job back; it runs again at restart',
        )
      }
      return
    }
    try {
      const finished = await store.finish({
        id: job.id,
        run: job.runs,
        completedAt: Date.now(),
        outcome,
      })
      if (finished) ended(outcome.status)
    } catch (error) {
      this.log.error(
        { err: error, job_id: job.id },
        'could not store the end of a job; it runs again at restart',
      )
    }
  }
}

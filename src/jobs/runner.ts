// The in-process job runner: takes pending jobs in creation order and runs them through the executor
// (cheap ones inline, the rest on the worker pool in the job lane, at most `concurrency` of those at a
// time), with the job factorisation budget and the hard time limit.
import type { FastifyBaseLogger } from 'fastify'
import { parse, stringify } from 'lossless-json'
import type { Algorithm } from '../algorithms/algorithm.js'
import { AlgorithmError, ContractError, ShutdownAbort } from '../errors.js'
import type { Executor } from '../execution/executor.js'
import type { Metrics } from '../metrics/metrics.js'
import type { JobOutcome, JobRecord, JobStore } from './store.js'
import { type Batch, WorkLoop } from './work-loop.js'

export interface RunnerOptions {
  store: JobStore
  executor: Executor
  algorithms: ReadonlyMap<string, Algorithm>
  metrics: Metrics
  log: FastifyBaseLogger
  concurrency: number
  factorBudgetMs: number
  timeoutMs: number
  maxDigits: number
  /** Called when a job with a webhook has ended, so its delivery goes out at once. */
  onDeliveryScheduled: () => void
  /** How often to look for pending jobs when nothing wakes the runner, in ms. */
  pollMs?: number
}

// Claimed in batches, and between batches the event loop serves HTTP: a backlog of cheap jobs, which
// run inline, must not hold it. `concurrency` bounds the jobs holding a worker thread; a cheap job
// ends within the batch that claimed it.
const CLAIM_BATCH = 64

export class JobRunner extends WorkLoop<JobRecord> {
  readonly #o: RunnerOptions
  // Jobs holding a worker thread now; `concurrency` bounds them.
  #heavy = 0

  constructor(options: RunnerOptions) {
    super(options.log, options.pollMs ?? 1000)
    this.#o = options
  }

  protected async take(): Promise<Batch<JobRecord>> {
    try {
      const limits = { jobs: CLAIM_BATCH, heavy: this.#o.concurrency - this.#heavy }
      const items = await this.#o.store.claim(limits, Date.now())
      return { items, more: items.length === CLAIM_BATCH }
    } catch (error) {
      this.log.error({ err: error }, 'could not claim jobs')
      return { items: [], more: false }
    }
  }

  protected async handle(job: JobRecord, shutdown: AbortSignal): Promise<void> {
    if (job.cheap) return this.#run(job, shutdown)
    this.#heavy++
    try {
      await this.#run(job, shutdown)
    } finally {
      this.#heavy--
    }
  }

  async #run(job: JobRecord, shutdown: AbortSignal): Promise<void> {
    const { store } = this.#o
    const startedAt = job.startedAt ?? Date.now()
    let outcome: JobOutcome
    try {
      outcome = await this.#execute(job, shutdown)
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
          if (state === 'failed') this.#ended(job, 'failed', startedAt)
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
      const finished = await store.finish({ id: job.id, run: job.runs, completedAt: Date.now(), outcome })
      if (finished) this.#ended(job, outcome.status, startedAt)
    } catch (error) {
      this.log.error(
        { err: error, job_id: job.id },
        'could not store the end of a job; it runs again at restart',
      )
    }
  }

  /** Runs the job; its failures are outcomes, and only a shutdown or a lost run (a dead worker) throws. */
  async #execute(job: JobRecord, shutdown: AbortSignal): Promise<JobOutcome> {
    const { algorithms, executor, factorBudgetMs, timeoutMs, maxDigits } = this.#o
    const algorithm = algorithms.get(job.algorithm)
    if (algorithm === undefined) {
      return { status: 'failed', error: `The algorithm '${job.algorithm}' is not available.` }
    }
    let params: unknown
    try {
      params = algorithm.parseParams(parse(job.params) as Record<string, unknown>, { maxDigits }, 'params.')
    } catch (error) {
      if (error instanceof ContractError) return { status: 'failed', error: error.message }
      throw error
    }
    // Cheap runs happen inline in microseconds: no timer for them.
    const timeout = new AbortController()
    const timer = algorithm.isCheap(params)
      ? undefined
      : setTimeout(() => timeout.abort(new Error('hard time limit')), timeoutMs)
    try {
      const run = await executor.run(algorithm, params, factorBudgetMs, {
        signal: timer === undefined ? undefined : AbortSignal.any([shutdown, timeout.signal]),
        lane: 'job',
      })
      return {
        status: 'completed',
        result: stringify(run.result) as string,
        metadata: JSON.stringify({
          algorithm: algorithm.name,
          version: algorithm.version,
          elapsed_time: run.elapsedSeconds,
        }),
      }
    } catch (error) {
      if (shutdown.aborted) throw shutdown.reason
      if (timeout.signal.aborted) {
        return { status: 'failed', error: `The job exceeded the hard time limit of ${timeoutMs / 1000} s.` }
      }
      if (error instanceof AlgorithmError) {
        this.log.error({ err: error, job_id: job.id }, 'a job failed')
        return { status: 'failed', error: error.message }
      }
      throw error
    } finally {
      clearTimeout(timer)
    }
  }

  #ended(job: JobRecord, status: 'completed' | 'failed', startedAt: number): void {
    const { metrics } = this.#o
    metrics.jobsCompleted.inc({ algorithm: job.algorithm, status })
    metrics.jobDuration.observe({ algorithm: job.algorithm }, (Date.now() - startedAt) / 1000)
    if (job.webhook !== null) this.#o.onDeliveryScheduled()
  }
}

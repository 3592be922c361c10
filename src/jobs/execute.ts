// Running one job, the same in every backend: read its params, run them on exactly the version the job
// is pinned to through the executor (cheap ones inline, the rest on the worker pool in the job lane) with
// the job budget and the hard time limit (the algorithm's timeoutMs, else ALGOSERVE_JOB_TIMEOUT_MS), and say
// how it ended. `signal` stops the run: a shutdown (the job is given back) or a cancel (the job fails
// saying so). A job whose version is not loaded here is given back: it waits for a process that has it.
import type { FastifyBaseLogger } from 'fastify'
import { parse, stringify } from 'lossless-json'
import { storedParams } from '../algorithms/params.js'
import type { Registry } from '../algorithms/registry.js'
import {
  AlgorithmError,
  AlgorithmInputError,
  CANCEL_REASON,
  ContractError,
  JOB_CANCELLED,
  RunTimeLimitError,
  VersionNotLoadedAbort,
} from '../errors.js'
import type { Executor } from '../execution/executor.js'
import { runMetadata } from '../execution/timed-run.js'
import { tracing } from '../tracing/seams.js'
import type { RunJob } from './backend.js'
import type { JobOutcome, JobRecord } from './job.js'
import { WORKER } from './job-end.js'
import { pinnedAlgorithm, UNPINNED } from './pinned.js'

const notLoaded = (job: JobRecord): string =>
  job.version === UNPINNED
    ? `The algorithm '${job.algorithm}' is not loaded here.`
    : `Version ${job.version} of the algorithm '${job.algorithm}' is not loaded here.`

export interface RunJobOptions {
  executor: Executor
  algorithms: Registry
  factorBudgetMs: number
  timeoutMs: number
  maxDigits: number
  log: FastifyBaseLogger
}

export function createRunJob(options: RunJobOptions): RunJob {
  const { algorithms, executor, factorBudgetMs, timeoutMs, maxDigits, log } = options
  // Each run in a span of the trace its job was created in (tracing/seams.ts).
  return (job, shutdown, progress, started) =>
    tracing.run(job, pinnedAlgorithm(algorithms, job)?.version ?? null, () =>
      runJob(job, shutdown, progress, started),
    )

  async function runJob(...[job, shutdown, progress, started]: Parameters<RunJob>): Promise<JobOutcome> {
    const algorithm = pinnedAlgorithm(algorithms, job)
    // Taken as its version was unloaded (a reload), or by a process that never had it.
    if (algorithm === undefined) throw new VersionNotLoadedAbort(notLoaded(job))
    let params: unknown
    try {
      params = storedParams(algorithm, parse(job.params) as Record<string, unknown>, maxDigits)
    } catch (error) {
      if (error instanceof ContractError) return { status: 'failed', error: error.message }
      throw error
    }
    try {
      const run = await executor.run(algorithm, params, {
        budgetMs: factorBudgetMs,
        signal: shutdown,
        lane: 'job',
        timeoutMs: algorithm.timeoutMs ?? timeoutMs,
        progress,
        onStart: started,
        logContext: { job_id: job.id },
        trace: tracing.carrier(),
      })
      return {
        status: 'completed',
        result: run.resultJson?.toString('utf8') ?? (stringify(run.result) as string),
        metadata: JSON.stringify({ ...runMetadata(algorithm, run), worker: WORKER, attempt: job.runs }),
      }
    } catch (error) {
      // A cancel (POST /jobs/{job_id}/cancel) ends the job; a shutdown gives it back.
      if (shutdown.aborted && shutdown.reason === CANCEL_REASON)
        return { status: 'failed', error: JOB_CANCELLED }
      if (shutdown.aborted) throw shutdown.reason
      if (error instanceof RunTimeLimitError) {
        return {
          status: 'failed',
          error: `The job exceeded the hard time limit of ${error.limitMs / 1000} s.`,
        }
      }
      // The algorithm refused the params: the job fails in its words, with nothing of ours to log.
      if (error instanceof AlgorithmInputError) return { status: 'failed', error: error.message }
      if (error instanceof AlgorithmError) {
        log.error({ err: error, job_id: job.id }, 'a job failed')
        return { status: 'failed', error: error.message }
      }
      throw error
    }
  }
}

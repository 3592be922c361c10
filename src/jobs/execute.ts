// Running one job, the same in every backend: parse its params, run it through the executor (cheap
// ones inline, the rest on the worker pool in the job lane) with the job factorisation budget and the
// hard time limit, and say how it ended. `signal` stops the run: a shutdown (the job is given back) or
// a cancel (the job fails saying so).
import type { FastifyBaseLogger } from 'fastify'
import { parse, stringify } from 'lossless-json'
import type { Algorithm } from '../algorithms/algorithm.js'
import { AlgorithmError, CANCEL_REASON, ContractError, JOB_CANCELLED } from '../errors.js'
import type { Executor } from '../execution/executor.js'
import type { RunJob } from './backend.js'
import type { JobOutcome } from './job.js'

export interface RunJobOptions {
  executor: Executor
  algorithms: ReadonlyMap<string, Algorithm>
  factorBudgetMs: number
  timeoutMs: number
  maxDigits: number
  log: FastifyBaseLogger
}

export function createRunJob(options: RunJobOptions): RunJob {
  const { algorithms, executor, factorBudgetMs, timeoutMs, maxDigits, log } = options
  return async (job, shutdown): Promise<JobOutcome> => {
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
      // A cancel (POST /jobs/{job_id}/cancel) ends the job; a shutdown gives it back.
      if (shutdown.aborted && shutdown.reason === CANCEL_REASON)
        return { status: 'failed', error: JOB_CANCELLED }
      if (shutdown.aborted) throw shutdown.reason
      if (timeout.signal.aborted) {
        return { status: 'failed', error: `The job exceeded the hard time limit of ${timeoutMs / 1000} s.` }
      }
      if (error instanceof AlgorithmError) {
        log.error({ err: error, job_id: job.id }, 'a job failed')
        return { status: 'failed', error: error.message }
      }
      throw error
    } finally {
      clearTimeout(timer)
    }
  }
}

// The piscina worker: runs one algorithm call off the thread that serves HTTP.

import { registry } from '../algorithms/registry.js'
import { type TimedRun, timedRun } from './timed-run.js'

export interface WorkerTask {
  algorithm: string
  params: unknown
  budgetMs: number
}

/**
 * The algorithm's failure comes back as a value, so that a rejected task always means the thread
 * itself died (and a job's run was lost rather than failed).
 */
export type WorkerOutcome = TimedRun | { failure: string }

export default function runTask({ algorithm, params, budgetMs }: WorkerTask): WorkerOutcome {
  try {
    const found = registry.get(algorithm)
    if (found === undefined) throw new Error(`Unknown algorithm '${algorithm}'`)
    return timedRun(found, params, { budgetMs })
  } catch (error) {
    return { failure: error instanceof Error ? (error.stack ?? error.message) : String(error) }
  }
}

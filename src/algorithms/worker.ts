// The piscina worker: runs one algorithm call off the thread that serves HTTP.
import { type TimedRun, timedRun } from '../timed-run.js'
import { algorithms } from './registry.js'

export interface WorkerTask {
  algorithm: string
  params: unknown
  budgetMs: number
}

export default function runTask({ algorithm, params, budgetMs }: WorkerTask): TimedRun {
  const found = algorithms.get(algorithm)
  if (found === undefined) throw new Error(`Unknown algorithm '${algorithm}'`)
  return timedRun(found, params, { budgetMs })
}

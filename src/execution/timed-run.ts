import type { Algorithm, RunOptions } from '../algorithms/algorithm.js'

export interface TimedRun {
  result: unknown
  /** The algorithm's own run time, in seconds (metadata.elapsed_time). */
  elapsedSeconds: number
}

/** Runs an algorithm and measures its own time, without any queueing before it. */
export function timedRun(algorithm: Algorithm, params: unknown, options: RunOptions): TimedRun {
  const start = performance.now()
  const result = algorithm.run(params, options)
  return { result, elapsedSeconds: (performance.now() - start) / 1000 }
}

/** The algorithm's run when it finds it cheap (runIfCheap), measured; otherwise undefined. */
export function timedRunIfCheap(
  algorithm: Algorithm,
  params: unknown,
  options: RunOptions,
): TimedRun | undefined {
  if (algorithm.runIfCheap === undefined) return undefined
  const start = performance.now()
  const result = algorithm.runIfCheap(params, options)
  return result === undefined ? undefined : { result, elapsedSeconds: (performance.now() - start) / 1000 }
}

import type { Algorithm, RunOptions } from '../algorithms/algorithm.js'

export interface TimedRun {
  result: unknown
  /** The algorithm's own run time, in seconds (metadata.elapsed_time), in whole microseconds. */
  elapsedSeconds: number
}

/**
 * Seconds since `start` (a performance.now()), rounded to the microsecond: digits below it measure
 * the clock calls themselves, not the run (a call costs tens of nanoseconds), and printed whole they
 * read as 0.004023482999999942.
 */
const secondsSince = (start: number): number => Math.round((performance.now() - start) * 1000) / 1_000_000

/** Runs an algorithm and measures its own time, without any queueing before it. */
export function timedRun(algorithm: Algorithm, params: unknown, options: RunOptions): TimedRun {
  const start = performance.now()
  const result = algorithm.run(params, options)
  return { result, elapsedSeconds: secondsSince(start) }
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
  return result === undefined ? undefined : { result, elapsedSeconds: secondsSince(start) }
}

import type { Algorithm, RunContext, SchemaCheckIssue } from '../algorithms/algorithm.js'
import { describeIssues } from '../algorithms/schema-check.js'

export interface TimedRun {
  result: unknown
  /**
   * The result as JSON (UTF-8), when it was read so off the main thread (a process's long result): replies
   * and the job store take these bytes as they are instead of writing `result` again.
   */
  resultJson?: Buffer
  /** The algorithm's own run time, in seconds (metadata.elapsed_time), in whole microseconds. */
  elapsedSeconds: number
}

/** A run's `metadata`, as every answer and job shows it. */
export const runMetadata = (algorithm: Algorithm, run: TimedRun) => ({
  algorithm: algorithm.name,
  version: algorithm.version,
  elapsed_time: run.elapsedSeconds,
})

/**
 * Seconds since `start` (a performance.now()), rounded to the microsecond: digits below it measure
 * the clock calls themselves, not the run (a call costs tens of nanoseconds), and printed whole they
 * read as 0.004023482999999942.
 */
export const secondsSince = (start: number): number =>
  Math.round((performance.now() - start) * 1000) / 1_000_000

/** A run's failure in the algorithm's own words: its message is what a client is shown. */
export class RunFailure extends Error {}

/** What a run whose result fails its result schema is told. */
export const resultSchemaFailure = (issues: SchemaCheckIssue[]): string =>
  `its result breaks its result schema: ${describeIssues(issues)}`

/** The result, once it passes the algorithm's result schema. */
export function checkedResult(algorithm: Algorithm, result: unknown): unknown {
  const issues = algorithm.checkResult(result)
  if (issues.length > 0) throw new RunFailure(resultSchemaFailure(issues))
  return result
}

/**
 * Runs an algorithm, measures its own time and checks its result, without any queueing before it.
 * `sendable` throws for a result that could not leave the run's thread; it is called before the schema
 * check, which a result that refers to itself would send to the end of the call stack.
 */
export async function timedRun(
  algorithm: Algorithm,
  params: unknown,
  context: RunContext,
  sendable?: (result: unknown) => void,
): Promise<TimedRun> {
  const start = performance.now()
  const result = await algorithm.module.run(params, context)
  const elapsedSeconds = secondsSince(start)
  sendable?.(result)
  return { result: checkedResult(algorithm, result), elapsedSeconds }
}

/**
 * The run on the calling thread, when the algorithm finds it cheap (its inline shortcuts: isCheap, or
 * runIfCheap finding the result), measured and checked; otherwise undefined.
 */
export function timedRunInline(
  algorithm: Algorithm,
  params: unknown,
  context: RunContext,
): TimedRun | undefined {
  const inline = algorithm.inline
  if (inline === undefined) return undefined
  const start = performance.now()
  const result = inline.isCheap(params)
    ? algorithm.module.run(params, context)
    : inline.runIfCheap?.(params, context)
  if (result === undefined) return undefined
  const elapsedSeconds = secondsSince(start)
  return { result: checkedResult(algorithm, result), elapsedSeconds }
}

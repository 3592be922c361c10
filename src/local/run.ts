// `algoserve run <path> [--params JSON] [key=value ...]`: one call of an algorithm in this process, as a
// job of it would run, with no server: the result's JSON on stdout (every digit of its integers), its
// progress and the time it took on stderr.
import { stringify } from 'lossless-json'
import type { Output } from '../client/cli.js'
import { progressLine } from '../client/format.js'
import { describeFailure, LOCAL_EXIT, LocalRuns } from './local-runs.js'

export interface RunRequest {
  path: string
  /** Which of the path's algorithms, when it holds more than one. */
  algorithm: string | null
  params: Record<string, unknown>
}

/** Runs the call; returns the exit code. */
export async function runLocal(request: RunRequest, env: NodeJS.ProcessEnv, output: Output): Promise<number> {
  const runs = await LocalRuns.open([request.path], env, output.err)
  try {
    for (const { message } of runs.failures) output.err(`algoserve: ${message}\n`)
    if (runs.failures.length > 0) return LOCAL_EXIT.failed
    const names = runs.algorithms.map((algorithm) => algorithm.name)
    const algorithm =
      request.algorithm === null
        ? runs.algorithms.length === 1
          ? runs.algorithms[0]
          : undefined
        : runs.algorithms.find((algorithm) => algorithm.name === request.algorithm)
    if (algorithm === undefined) {
      const which =
        request.algorithm === null
          ? `${request.path} holds ${names.length} algorithms: choose one with --algorithm`
          : `${request.path} holds no algorithm '${request.algorithm}'`
      output.err(`algoserve: ${which} (${names.join(', ') || 'none'})\n`)
      return LOCAL_EXIT.usage
    }
    const start = performance.now()
    try {
      const run = await runs.run(algorithm, request.params, (fraction, message) =>
        output.err(`${progressLine('progress', { progress: fraction, message: message ?? null })}\n`),
      )
      const took = performance.now() - start
      output.out(`${run.resultJson?.toString('utf8') ?? (stringify(run.result) as string)}\n`)
      output.err(
        `${algorithm.name}@${algorithm.version}: ${ms(took)} (the run itself: ${ms(run.elapsedSeconds * 1000)})\n`,
      )
      return LOCAL_EXIT.ok
    } catch (error) {
      output.err(`algoserve: ${algorithm.name}@${algorithm.version}: ${describeFailure(error)}\n`)
      return LOCAL_EXIT.failed
    }
  } finally {
    await runs.close()
  }
}

/** A duration for a person: tenths of a ms below 10 ms, whole ms above. */
const ms = (value: number) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`

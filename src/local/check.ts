// `algoserve check [<path> ...]`: loads the algorithms as the service would and runs each one's examples
// as jobs of them would run, each result checked against the result schema; one line per algorithm on
// stdout, and exit 1 when any fails, for a team's CI. What the threads and programs log goes to stderr.
import { relative } from 'node:path'
import { parse, stringify } from 'lossless-json'
import type { Algorithm } from '../algorithms/algorithm.js'
import type { Output } from '../client/cli.js'
import { describeFailure, LOCAL_EXIT, LocalRuns } from './local-runs.js'

/** Checks the algorithms `paths` name (none: ALGOSERVE_ALGORITHMS); returns the exit code. */
export async function check(paths: string[], env: NodeJS.ProcessEnv, output: Output): Promise<number> {
  const runs = await LocalRuns.open(paths, env, output.err)
  try {
    let failed = runs.failures.length > 0
    for (const { file, message } of runs.failures) {
      // The loader's message names the file first, and the line does already.
      const own = file === null ? -1 : message.indexOf(`${file}: `)
      const said = own === -1 || file === null ? message : message.slice(own + file.length + 2)
      output.out(`${file === null ? 'algorithms' : shown(file)} FAIL could not load: ${said}\n`)
    }
    for (const algorithm of runs.algorithms) {
      const line = await checkOne(runs, algorithm)
      if (line.startsWith('FAIL')) failed = true
      output.out(`${algorithm.name}@${algorithm.version} ${line}\n`)
    }
    return failed ? LOCAL_EXIT.failed : LOCAL_EXIT.ok
  } finally {
    await runs.close()
  }
}

/** `ok (2 examples, 31 ms)`, or `FAIL examples[1]: ... (12 ms)` (as the loader names them). */
async function checkOne(runs: LocalRuns, algorithm: Algorithm): Promise<string> {
  const examples = algorithm.module.examples ?? []
  const start = performance.now()
  const took = () => `${Math.round(performance.now() - start)} ms`
  for (const [i, example] of examples.entries()) {
    try {
      // As a client would send it: JSON, its numbers read with every digit.
      const raw = parse(stringify(example.params) as string) as Record<string, unknown>
      await runs.run(algorithm, raw)
    } catch (error) {
      return `FAIL examples[${i}]: ${describeFailure(error)} (${took()})`
    }
  }
  if (examples.length === 0) return 'ok (no examples: nothing was run)'
  return `ok (${examples.length} example${examples.length === 1 ? '' : 's'}, ${took()})`
}

/** A file as the lines show it: relative to the working folder when it is inside it. */
function shown(file: string): string {
  const path = relative(process.cwd(), file)
  return path.startsWith('..') ? file : path
}

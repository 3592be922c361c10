// `algoserve check ...` and `algoserve run ...`: an algorithm tried in this process before it is served,
// with no server (check.ts, run.ts). Arguments are read as the client's are (client/args.ts), and the
// settings of serve (memory, time limits) come from the environment as serve reads them.
import { paramsOf, split, USAGE_HINT, UsageError } from '../client/args.js'
import type { Output } from '../client/cli.js'
import { check } from './check.js'
import { LOCAL_EXIT } from './local-runs.js'
import { runLocal } from './run.js'
import { LOCAL_USAGE } from './usage.js'

const ALLOWED: Record<string, string[]> = { check: [], run: ['params', 'algorithm'] }

/** Runs `check ...` or `run ...` (argv without the program); returns the process's exit code. */
export async function runLocalCommand(
  argv: string[],
  env: NodeJS.ProcessEnv,
  output: Output,
): Promise<number> {
  const [name = '', ...args] = argv
  let positionals: string[]
  let flags: Map<string, string>
  try {
    ;({ positionals, flags } = split(args))
    if (flags.has('help') || args.includes('-h')) {
      output.out(LOCAL_USAGE)
      return LOCAL_EXIT.ok
    }
    for (const flag of flags.keys())
      if (!ALLOWED[name]?.includes(flag)) throw new UsageError(`${name} takes no --${flag}`)
    if (name === 'check') {
      if (positionals.length === 0 && (env.ALGOSERVE_ALGORITHMS ?? '').trim() === '')
        throw new UsageError('check: name the algorithms (files or folders), or set ALGOSERVE_ALGORITHMS')
      return await check(positionals, env, output)
    }
    const [path, ...pairs] = positionals
    if (path === undefined || path.includes('='))
      throw new UsageError('run: missing <path> (a module file, or a folder with an algorithm.json)')
    const request = {
      path,
      algorithm: flags.get('algorithm') ?? null,
      params: paramsOf(flags.get('params') ?? null, pairs),
    }
    return await runLocal(request, env, output)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    output.err(`algoserve: ${error.message}\n${USAGE_HINT}\n`)
    return LOCAL_EXIT.usage
  }
}

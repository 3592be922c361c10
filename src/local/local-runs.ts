// Algorithms loaded and run in this process, as the service loads and runs them, without a server: what
// `algoserve check` and `algoserve run` stand on. The same loader (the contract, the examples against the
// params schema), the same params reading as a job's, and the same executor: a module's runs on a worker
// thread, a program's on its own process, each with its algorithm's limits.
import pino, { type Logger } from 'pino'
import type { Algorithm } from '../algorithms/algorithm.js'
import { loadModuleFile, moduleFiles } from '../algorithms/loader.js'
import { readParams } from '../algorithms/params.js'
import { loadRegistry, type Registry } from '../algorithms/registry.js'
import { boundsOf, checkDeclaredBounds } from '../algorithms/request-bounds.js'
import { type Config, loadConfig } from '../config.js'
import { AlgorithmError, AlgorithmInputError, ConfigError, SchemaValidationError } from '../errors.js'
import { Executor } from '../execution/executor.js'
import { ProcessPoolSet } from '../execution/process-pool.js'
import type { Progress } from '../execution/run-way.js'
import { RunFailure, type TimedRun } from '../execution/timed-run.js'
import { createMetrics } from '../metrics/metrics.js'

/**
 * How long a run waits for its worker thread or its program's process, in ms: a program that is still
 * starting gets this long; one that keeps dying at its start fails the run at once (startWatch).
 */
const START_WAIT_MS = 30_000
/** How often a program's run looks whether its process failed to start. */
const START_POLL_MS = 100

/** A file that did not load, or a problem of the files together (a name taken twice): the service's words. */
export interface LoadFailure {
  file: string | null
  message: string
}

export class LocalRuns {
  readonly config: Config
  /** The algorithms of the files given, in their order (not the built-in ones). */
  readonly algorithms: Algorithm[]
  readonly failures: LoadFailure[]
  readonly #executor: Executor | null
  readonly #log: Logger

  private constructor(
    config: Config,
    algorithms: Algorithm[],
    failures: LoadFailure[],
    executor: Executor | null,
    log: Logger,
  ) {
    this.config = config
    this.algorithms = algorithms
    this.failures = failures
    this.#executor = executor
    this.#log = log
  }

  /**
   * Loads the algorithms that `entries` name, read as ALGOSERVE_ALGORITHMS reads its value (none: that
   * setting's), with the other settings from `env`, and starts their threads and processes. A file
   * that does not load is a failure, and the others load all the same. Throws a ConfigError for a
   * setting, or a path that does not exist.
   */
  static async open(
    entries: readonly string[],
    env: NodeJS.ProcessEnv,
    err: (text: string) => void,
  ): Promise<LocalRuns> {
    const config = loadConfig(entries.length > 0 ? ['--algorithms', entries.join(',')] : [], env)
    const log = stderrLog(err)
    const failures: LoadFailure[] = []
    const files: string[] = []
    // A file at a time first, so that each that does not load is a failure of its own and the rest load.
    for (const file of filesOf(config.algorithms, entries.length > 0)) {
      try {
        await loadModuleFile(file)
        files.push(file)
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error
        failures.push({ file, message: error.message })
      }
    }
    let registry: Registry
    try {
      // Then all together, as the service loads them (imported once: the modules' code does not run again):
      // a name taken twice, or PrimeChecker's, or bounds above the operator's ceilings fail here.
      registry = await loadRegistry(files)
      checkDeclaredBounds(registry.all(), config)
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      failures.push({ file: null, message: error.message })
      return new LocalRuns(config, [], failures, null, log)
    }
    const algorithms = registry.all().filter((algorithm) => files.includes(algorithm.source))
    const processes = new ProcessPoolSet(
      registry,
      { invokeQueueTimeoutMs: START_WAIT_MS, memoryMb: config.algorithmMemoryMb },
      algorithms.map((algorithm) => algorithm.name),
    )
    const executor = new Executor(
      {
        // Runs go one at a time.
        threads: 1,
        invokeQueueTimeoutMs: START_WAIT_MS,
        algorithmFiles: files,
        threadHeapMb: config.threadHeapMb,
        memoryMb: config.algorithmMemoryMb,
        processes,
      },
      createMetrics(),
    )
    try {
      await executor.warm()
    } catch (error) {
      await executor.close()
      if (!(error instanceof ConfigError)) throw error
      failures.push({ file: null, message: error.message })
      return new LocalRuns(config, [], failures, null, log)
    }
    processes.start(log.child({ component: 'algorithms' }))
    return new LocalRuns(config, algorithms, failures, executor, log)
  }

  /**
   * One call, as a job of these params would run: `raw` read as the service reads a request's params
   * (losslessly parsed numbers: integers of any size), checked against the params schema (a
   * SchemaValidationError), then run with the algorithm's time limit, else ALGOSERVE_JOB_TIMEOUT_MS.
   * Rejects as Executor.run does.
   */
  async run(algorithm: Algorithm, raw: Record<string, unknown>, progress?: Progress): Promise<TimedRun> {
    const executor = this.#executor
    if (executor === null) throw new Error('nothing was loaded')
    const params = readParams(algorithm, raw, { maxDigits: boundsOf(algorithm, this.config).maxDigits }, [
      'params',
    ])
    const watch = startWatch(executor, algorithm)
    try {
      return await executor.run(algorithm, params, {
        budgetMs: this.config.jobFactorBudgetMs,
        // The lane whose wait is bounded: a process that never starts fails the run, not hangs it.
        lane: 'invoke',
        timeoutMs: algorithm.timeoutMs ?? this.config.jobTimeoutMs,
        ...(progress === undefined ? {} : { progress }),
        ...(watch === null ? {} : { signal: watch.signal }),
      })
    } finally {
      watch?.stop()
    }
  }

  /** Stops the threads and the programs' processes, and writes out what the log holds. */
  async close(): Promise<void> {
    await this.#executor?.close()
    this.#log.flush()
  }
}

/** moduleFiles(); its message names the setting only when the setting named the paths. */
function filesOf(entries: readonly string[], given: boolean): string[] {
  try {
    return moduleFiles(entries)
  } catch (error) {
    if (!given || !(error instanceof ConfigError)) throw error
    throw new ConfigError(error.message.replace(/^ALGOSERVE_ALGORITHMS: /, ''))
  }
}

/**
 * For a program: a signal aborted when its processes keep failing to start (the pool's readiness turns
 * false, and the pool has logged why), so that the run fails then rather than at the end of its wait.
 */
function startWatch(executor: Executor, algorithm: Algorithm): { signal: AbortSignal; stop(): void } | null {
  const ready = executor.checks()[`process:${algorithm.name}`]
  if (algorithm.process === undefined || ready === undefined) return null
  const controller = new AbortController()
  const timer = setInterval(() => {
    if (ready()) return
    controller.abort(new Error('its process does not start (its log on stderr says why)'))
  }, START_POLL_MS)
  return { signal: controller.signal, stop: () => clearInterval(timer) }
}

/**
 * The log of the threads and processes (a program's stderr lines, a process that died) as lines of text on
 * stderr, each with its algorithm, rather than the service's JSON lines.
 */
function stderrLog(err: (text: string) => void): Logger {
  return pino(
    { level: 'info', base: null, timestamp: false },
    {
      write(line: string) {
        const entry = JSON.parse(line) as { msg?: string; algorithm?: string; err?: { message?: string } }
        const who = entry.algorithm === undefined ? '' : `[${entry.algorithm}] `
        const why = entry.err?.message === undefined ? '' : `: ${entry.err.message}`
        err(`${who}${entry.msg ?? ''}${why}\n`)
      },
    },
  )
}

/** The exit codes of `check` and `run`. */
export const LOCAL_EXIT = { ok: 0, failed: 1, usage: 2 } as const

/** Why a run failed, in a line: the algorithm's own words where it gave them. */
export function describeFailure(error: unknown): string {
  if (error instanceof AlgorithmInputError) {
    const field = error.details?.field
    return `the algorithm refused its params: ${error.message}${typeof field === 'string' ? ` (field ${field})` : ''}`
  }
  if (error instanceof SchemaValidationError) return `invalid params: ${error.message}`
  // A run that threw: its error's own message, which the service keeps to its log.
  if (error instanceof AlgorithmError) {
    const { cause } = error
    if (cause instanceof RunFailure || cause instanceof AlgorithmError || !(cause instanceof Error))
      return error.message
    return `the run failed: ${cause.message}`
  }
  return error instanceof Error ? error.message : String(error)
}

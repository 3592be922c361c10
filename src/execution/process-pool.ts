// The processes of process algorithms: `instances` of each, started at start and stopped at shutdown.
// A call takes an idle process or waits for one in its lane (lanes.ts); a process that is stopped or
// exits is replaced at once, and one that dies at its start is tried again after a wait, growing, with
// the algorithm's readiness check false meanwhile (GET /readyz names it). A program may answer once and
// exit: a call written to it as it exits goes to its replacement.
import type { FastifyBaseLogger } from 'fastify'
import type { Algorithm } from '../algorithms/algorithm.js'
import { type Registry, versionKey } from '../algorithms/registry.js'
import { shareOf } from '../cluster/share.js'
import { ServiceUnavailableError } from '../errors.js'
import { AlgorithmProcess, ExitedBeforeTheCall } from './algorithm-process.js'
import type { Lane } from './lanes.js'
import { Lanes } from './lanes.js'
import { LogBudget } from './log-budget.js'
import { type OutputLimits, ResultJson } from './process-protocol.js'
import {
  DEFAULT_MAX_PROGRESS_BYTES,
  DEFAULT_MAX_RESULT_BYTES,
  type RunOptions,
  type RunWay,
  signalOf,
  tellStart,
} from './run-way.js'
import { checkedResult, secondsSince, type TimedRun } from './timed-run.js'

/** A process that exits this soon after it started, before any call, failed to start. */
const START_GRACE_MS = 1000
/** Waits before starting again a process that failed to start, one after another; then the last. */
const RESTART_WAITS_MS = [1000, 2000, 5000, 10_000, 30_000]

export interface ProcessPoolOptions {
  /** The longest wait of an /invoke call for a free process, in ms; then a 503. */
  invokeQueueTimeoutMs: number
  /** The memory limit of a program whose algorithm declares none, in MB; 0 for none. */
  memoryMb?: number
  /** HTTP processes that divide each algorithm's `instances` among them (ALGOSERVE_HTTP_PROCESSES). */
  sharedBy?: number
}

/** The processes of one algorithm: the way of its calls. */
export class ProcessPool implements RunWay {
  readonly #algorithm: Algorithm
  /** Each program's memory limit in MB: the algorithm's, else the setting's; 0 for none. */
  readonly #memoryMb: number
  readonly #lanes: Lanes<AlgorithmProcess>
  readonly #processes: (AlgorithmProcess | undefined)[]
  /** Why each instance is not running, while it failed to start. */
  readonly #failures: (string | undefined)[]
  readonly #attempts: number[]
  readonly #restarts = new Set<NodeJS.Timeout>()
  #idle: AlgorithmProcess[] = []
  #log: FastifyBaseLogger | undefined
  #budgets: { stderr: LogBudget; strays: LogBudget } | undefined
  #closed = false
  /** Calls taken and not yet ended. */
  #calls = 0
  /** Set once a reload removed its version: it closes when its last call ends. */
  #retired: (() => void) | undefined

  constructor(algorithm: Algorithm, options: ProcessPoolOptions) {
    const instances = shareOf(algorithm.process?.instances ?? 1, options.sharedBy ?? 1)
    this.#algorithm = algorithm
    this.#memoryMb = algorithm.memoryMb ?? options.memoryMb ?? 0
    this.#lanes = new Lanes(options.invokeQueueTimeoutMs, `process of the algorithm '${algorithm.name}'`)
    this.#processes = new Array(instances).fill(undefined)
    this.#failures = new Array(instances).fill(undefined)
    this.#attempts = new Array(instances).fill(0)
  }

  /** Starts every instance. */
  start(log: FastifyBaseLogger): void {
    this.#log = log
    const name = this.#algorithm.name
    this.#budgets = {
      stderr: new LogBudget(name, 'stderr', log),
      strays: new LogBudget(name, 'warnings of messages out of turn', log),
    }
    for (let i = 0; i < this.#processes.length; i++) this.#startInstance(i)
  }

  /** Why an instance is not running, while one failed to start; otherwise undefined. */
  get failure(): string | undefined {
    return this.#failures.find((failure) => failure !== undefined)
  }

  /** The process ids running now, for tests and operators. */
  get pids(): number[] {
    return this.#processes.flatMap((process) =>
      process !== undefined && running(process) && process.pid !== undefined ? [process.pid] : [],
    )
  }

  /**
   * One call on an idle process, measured and its result checked against the result schema. A call its
   * process exited before taking (ExitedBeforeTheCall) is handed to the next, within what is left of
   * its time limit. A program has no budget to cut its work short by: `budgetMs` is a module's.
   */
  async run(params: unknown, options: Omit<RunOptions, 'budgetMs'>): Promise<TimedRun> {
    this.#calls++
    try {
      return await this.#run(params, options)
    } finally {
      if (--this.#calls === 0) this.#retired?.()
    }
  }

  async #run(params: unknown, options: Omit<RunOptions, 'budgetMs'>): Promise<TimedRun> {
    const signal = signalOf(options)
    const { lane = 'invoke', timeoutMs, progress, logContext, trace } = options
    let first: number | undefined
    for (let hands = 1; ; hands++) {
      const process = await this.#idleProcess(lane, signal)
      const start = performance.now()
      if (first === undefined) tellStart(options)
      first ??= start
      const left = timeoutMs === undefined ? undefined : Math.max(0, timeoutMs - Math.round(start - first))
      try {
        const result = await process.call(params, { timeoutMs: left, signal, progress, logContext, trace })
        const elapsedSeconds = secondsSince(start)
        // A long result was checked where it was read, and comes as its JSON: its value is read only if
        // asked.
        if (result instanceof ResultJson) {
          let value: unknown
          return {
            get result() {
              value ??= result.value()
              return value
            },
            resultJson: result.bytes,
            elapsedSeconds,
          }
        }
        return { result: checkedResult(this.#algorithm, result), elapsedSeconds }
      } catch (error) {
        // Each of its processes may have been on its way out once; past that, it is the program's doing.
        if (!(error instanceof ExitedBeforeTheCall) || hands > this.#processes.length) throw error
      } finally {
        if (process.state === 'idle') this.#free(process)
      }
    }
  }

  async #idleProcess(lane: Lane, signal: AbortSignal | undefined): Promise<AlgorithmProcess> {
    for (;;) {
      const process = this.#idle.pop() ?? (await this.#waitForProcess(lane, signal))
      // One that has exited, or begun to, since it was listed is never handed a call.
      if (process.state === 'idle') return process
    }
  }

  #waitForProcess(lane: Lane, signal: AbortSignal | undefined): Promise<AlgorithmProcess> {
    const failure = this.failure
    // A call waits for a process that is starting, not for one that keeps failing to start.
    if (lane === 'invoke' && failure !== undefined && !this.#processes.some((p) => p && running(p))) {
      throw new ServiceUnavailableError(
        `The algorithm '${this.#algorithm.name}' is not running: its process ${failure}.`,
      )
    }
    return this.#lanes.wait(lane, this.#algorithm.name, signal)
  }

  #free(process: AlgorithmProcess): void {
    if (!this.#lanes.handOver(process)) this.#idle.push(process)
  }

  #startInstance(i: number): void {
    if (this.#closed) return
    const spec = this.#algorithm.process
    const log = this.#log
    const budgets = this.#budgets
    if (spec === undefined || log === undefined || budgets === undefined) return
    const name = this.#algorithm.name
    const limits: OutputLimits = {
      maxResultBytes: this.#algorithm.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      maxProgressBytes: this.#algorithm.maxProgressBytes ?? DEFAULT_MAX_PROGRESS_BYTES,
    }
    const resultSchema = this.#algorithm.module.result
    const memoryMb = this.#memoryMb
    const process = new AlgorithmProcess({ name, spec, log, budgets, limits, resultSchema, memoryMb })
    this.#processes[i] = process
    process.started.then(
      () => {
        if (process.state !== 'idle') return
        const up = setTimeout(() => {
          this.#failures[i] = undefined
          this.#attempts[i] = 0
        }, START_GRACE_MS)
        process.exited.then(() => clearTimeout(up))
        this.#free(process)
      },
      () => {},
    )
    process.exited.then((how) => {
      this.#idle = this.#idle.filter((idle) => idle !== process)
      if (this.#processes[i] === process) this.#processes[i] = undefined
      if (this.#closed) return
      if (process.calls === 0 && !process.stopped && Date.now() - process.startedAt < START_GRACE_MS) {
        const attempt = this.#attempts[i] ?? 0
        const wait = RESTART_WAITS_MS[Math.min(attempt, RESTART_WAITS_MS.length - 1)] as number
        this.#attempts[i] = attempt + 1
        this.#failures[i] = `${how} at start`
        log.error(
          { algorithm: name, command: spec.command },
          `a process of the algorithm '${name}' ${how} at start; starting it again in ${wait / 1000} s`,
        )
        const timer = setTimeout(() => {
          this.#restarts.delete(timer)
          this.#startInstance(i)
        }, wait)
        this.#restarts.add(timer)
        return
      }
      if (!process.stopped) {
        // Exiting cleanly is how a program that answers once and exits works: no cause for a warning.
        const level = process.exitCode === 0 ? 'debug' : 'warn'
        log[level]({ algorithm: name }, `a process of the algorithm '${name}' ${how}; replacing it`)
      }
      this.#startInstance(i)
    })
  }

  /** It can take a call: no instance keeps failing to start, or one runs all the same. */
  ready(): boolean {
    return this.failure === undefined || this.#processes.some((process) => process && running(process))
  }

  /** Closes once the calls it has taken end: a reload removed its version, which takes no new calls. */
  retire(): Promise<void> {
    if (this.#calls === 0) return this.close()
    return new Promise((resolve) => {
      this.#retired = () => resolve(this.close())
    })
  }

  /** Closes every process's stdin, then stops those still there after a grace. */
  async close(): Promise<void> {
    this.#closed = true
    for (const timer of this.#restarts) clearTimeout(timer)
    await Promise.all(this.#processes.map((process) => process?.close()))
    this.#budgets?.stderr.flush()
    this.#budgets?.strays.flush()
  }
}

/** Started, or starting, and not on its way out. */
const running = (process: AlgorithmProcess): boolean =>
  process.state === 'starting' || process.state === 'idle' || process.state === 'busy'

/** A pool's name in readiness checks: the algorithm's, with its version when the name has several. */
const poolName = (algorithms: Registry, algorithm: Algorithm): string =>
  algorithms.versions(algorithm.name).length > 1
    ? versionKey(algorithm.name, algorithm.version)
    : algorithm.name

/**
 * One ProcessPool per process algorithm of a registry: all of them, or those `served` names. A reload
 * (algorithmsChanged) starts the pools of the versions it added and retires those of the versions it removed.
 */
export class ProcessPoolSet {
  /** By version (versionKey): a version is immutable, so its pool outlives the reloads that keep it. */
  readonly #pools = new Map<string, ProcessPool>()
  /** Pools of removed versions, until their last call ends. */
  readonly #retiring = new Set<ProcessPool>()
  readonly #options: ProcessPoolOptions
  readonly #served: readonly string[] | undefined
  #log: FastifyBaseLogger | undefined
  /** Readiness check names, by version, of the versions loaded now. */
  readonly #checkNames = new Map<string, string>()

  constructor(algorithms: Registry, options: ProcessPoolOptions, served?: readonly string[]) {
    this.#options = options
    this.#served = served
    for (const algorithm of this.#wanted(algorithms)) {
      const key = versionKey(algorithm.name, algorithm.version)
      this.#pools.set(key, new ProcessPool(algorithm, options))
      this.#checkNames.set(key, poolName(algorithms, algorithm))
    }
  }

  /** The process algorithms of a registry that this process runs. */
  #wanted(algorithms: Registry): Algorithm[] {
    const served = this.#served
    return algorithms
      .all()
      .filter((one) => one.process !== undefined && (served === undefined || served.includes(one.name)))
  }

  /** Whether there is any process algorithm. */
  get any(): boolean {
    return this.#pools.size > 0
  }

  pool(algorithm: Algorithm): ProcessPool | undefined {
    return this.#pools.get(versionKey(algorithm.name, algorithm.version))
  }

  start(log: FastifyBaseLogger): void {
    this.#log = log
    for (const pool of this.#pools.values()) pool.start(log)
  }

  /**
   * After a reload: the pools of new versions start, and those of versions no longer loaded close once
   * their calls end (a job or call running on one finishes there).
   */
  algorithmsChanged(algorithms: Registry): void {
    const wanted = new Map(this.#wanted(algorithms).map((one) => [versionKey(one.name, one.version), one]))
    this.#checkNames.clear()
    for (const [key, algorithm] of wanted) this.#checkNames.set(key, poolName(algorithms, algorithm))
    for (const [key, pool] of this.#pools) {
      if (wanted.has(key)) continue
      this.#pools.delete(key)
      this.#retiring.add(pool)
      void pool.retire().then(() => this.#retiring.delete(pool))
    }
    for (const [key, algorithm] of wanted) {
      if (this.#pools.has(key)) continue
      const pool = new ProcessPool(algorithm, this.#options)
      this.#pools.set(key, pool)
      if (this.#log !== undefined) pool.start(this.#log)
    }
  }

  /** A readiness check per process algorithm, `process:<name>`: false while none of its processes runs. */
  checks(): Record<string, () => boolean> {
    return Object.fromEntries(
      [...this.#checkNames].map(([key, name]) => [
        `process:${name}`,
        () => this.#pools.get(key)?.ready() ?? true,
      ]),
    )
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values(), ...this.#retiring].map((pool) => pool.close()))
  }
}

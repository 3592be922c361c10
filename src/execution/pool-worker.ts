// The piscina worker: loads the same algorithm modules as the process, once, before its first task
// (the resolved files come in workerData), and runs one algorithm call off the thread that serves HTTP.
import { type MessagePort, parentPort, threadId, workerData } from 'node:worker_threads'
import { loadRegistry, type Registry } from '../algorithms/registry.js'
import { ignoreProgress, ProgressThrottle } from './progress.js'
import { type TimedRun, timedRun } from './timed-run.js'

export interface PoolWorkerData {
  /** The module files of ALGOSERVE_ALGORITHMS, resolved. */
  algorithmFiles: string[]
}

export interface WorkerTask {
  algorithm: string
  params: unknown
  budgetMs: number
  /** The time limit, as a Unix time in ms. */
  deadline: number
  /** Where the run's progress goes (transferred with the task), when the caller follows it. */
  progress?: MessagePort
}

/**
 * The algorithm's failure comes back as a value, so that a rejected task always means the thread
 * itself died. `failure` is the algorithm's own words; `stack` is for the log only.
 */
export type WorkerOutcome = TimedRun | { failure: string; stack: string | undefined }

async function runTask(registry: Registry, task: WorkerTask): Promise<WorkerOutcome> {
  const { algorithm, params, budgetMs, deadline, progress: port } = task
  const throttle = port === undefined ? undefined : new ProgressThrottle((update) => port.postMessage(update))
  try {
    const found = registry.get(algorithm)
    if (found === undefined) throw new Error(`Unknown algorithm '${algorithm}'`)
    // The run is stopped at the deadline by the process anyway; the signal lets it stop by itself first.
    const signal = AbortSignal.timeout(Math.max(0, Math.min(deadline - Date.now(), 2 ** 31 - 1)))
    const progress = throttle?.report ?? ignoreProgress
    return await timedRun(found, params, { signal, deadline, budgetMs, progress })
  } catch (error) {
    return failureOf(error)
  } finally {
    // Its last update is on the port before the outcome leaves: the executor reads the port after it.
    throttle?.end()
  }
}

function failureOf(error: unknown): { failure: string; stack: string | undefined } {
  return error instanceof Error
    ? { failure: error.message, stack: error.stack }
    : { failure: String(error), stack: undefined }
}

/** What a thread posts once it has loaded the modules, or failed to (Executor.warm() waits for it). */
export interface ThreadLoad {
  /** The thread's id, once its modules are loaded. */
  algoserveThreadLoaded?: number
  /** Why its modules could not be loaded. */
  algoserveThreadFailed?: string
}

// Piscina waits for a default export that is a promise of the task function: the modules are loaded
// before the first task (a top-level await would do the same, but tsx cannot load one in a thread).
// A module that fails to load here but not in the process (one that checks isMainThread) is told in a
// message, not by a rejection, which piscina would meet only at a run (and tsx garbles on Node 20).
export default loadRegistry((workerData as PoolWorkerData | undefined)?.algorithmFiles ?? []).then(
  (registry) => {
    tell({ algoserveThreadLoaded: threadId })
    return (task: WorkerTask) => runTask(registry, task)
  },
  (error: unknown) => {
    const { failure, stack } = failureOf(error)
    tell({ algoserveThreadFailed: failure })
    // Its message names a file: a client of a run here is told less.
    return (): WorkerOutcome => ({ failure: 'its worker thread could not load the algorithm modules', stack })
  },
)

function tell(message: ThreadLoad): void {
  parentPort?.postMessage(message)
}

// The piscina worker: loads the same algorithm modules as the process, once, before its first task
// (the resolved files come in workerData), and runs batches of algorithm calls (thread-batch.ts) off
// the thread that serves HTTP, one call after the other, posting each outcome as its call ends.
import { parentPort, threadId, workerData } from 'node:worker_threads'
import { loadRegistry, type Registry } from '../algorithms/registry.js'
import { ignoreProgress, ProgressThrottle, type ProgressUpdate } from './progress.js'
import {
  type BatchOutcome,
  type BatchProgress,
  batchViews,
  ENDED,
  QUEUED,
  STARTED,
  type WorkerBatch,
  type WorkerOutcome,
  type WorkerTask,
} from './thread-batch.js'
import { timedRun } from './timed-run.js'

export interface PoolWorkerData {
  /** The module files of ALGOSERVE_ALGORITHMS, resolved. */
  algorithmFiles: string[]
}

async function runTask(
  registry: Registry,
  task: WorkerTask,
  batch: number,
  index: number,
): Promise<WorkerOutcome> {
  const { algorithm, params, budgetMs, timeoutMs, followed } = task
  const deadline = timeoutMs === undefined ? Number.MAX_SAFE_INTEGER : Date.now() + timeoutMs
  let timer: NodeJS.Timeout | undefined
  const throttle = followed
    ? new ProgressThrottle((update: ProgressUpdate) => {
        const message: BatchProgress = { algoserveProgress: batch, index, update }
        parentPort?.postMessage(message)
      })
    : undefined
  try {
    const found = registry.get(algorithm)
    if (found === undefined) throw new Error(`Unknown algorithm '${algorithm}'`)
    // The run is stopped at the deadline by the executor anyway; the signal lets it stop by itself first.
    // Not AbortSignal.timeout: its timer cannot be cleared, and each run's signal stayed on the thread's
    // heap long after the run (about 1 KB a run, until the thread ran out of memory).
    const stop = new AbortController()
    if (timeoutMs !== undefined) timer = setTimeout(abortAtLimit, Math.min(timeoutMs, 2 ** 31 - 1), stop)
    const progress = throttle?.report ?? ignoreProgress
    return await timedRun(found, params, { signal: stop.signal, deadline, budgetMs, progress })
  } catch (error) {
    return failureOf(error)
  } finally {
    clearTimeout(timer)
    // Its last update leaves before the outcome, on the same port: the executor reads it first.
    throttle?.end()
  }
}

function abortAtLimit(stop: AbortController): void {
  stop.abort(new DOMException('The run reached its time limit', 'TimeoutError'))
}

/** Runs the batch's runs in order, each unless the executor took it back before it started. */
async function runBatch(registry: Registry, batch: WorkerBatch): Promise<void> {
  const { starts, states } = batchViews(batch.shared)
  for (let index = 0; index < batch.runs.length; index++) {
    // Written before the run is taken, so that the executor sees it once it sees STARTED.
    starts[index] = Date.now()
    if (Atomics.compareExchange(states, index, QUEUED, STARTED) !== QUEUED) continue
    const outcome = await runTask(registry, batch.runs[index] as WorkerTask, batch.id, index)
    Atomics.store(states, index, ENDED)
    const ended: BatchOutcome = { algoserveBatch: batch.id, index, outcome }
    parentPort?.postMessage(ended)
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
export default loadRegistry((workerData as PoolWorkerData | undefined)?.algorithmFiles ?? [], {
  checkedByProcess: true,
}).then(
  (registry) => {
    tell({ algoserveThreadLoaded: threadId })
    return (batch: WorkerBatch) => runBatch(registry, batch)
  },
  (error: unknown) => {
    const { failure, stack } = failureOf(error)
    tell({ algoserveThreadFailed: failure })
    // Its message names a file: a client of a run here is told less.
    return (batch: WorkerBatch) => {
      const outcome: WorkerOutcome = {
        failure: 'its worker thread could not load the algorithm modules',
        stack,
      }
      const { states } = batchViews(batch.shared)
      batch.runs.forEach((_, index) => {
        if (Atomics.compareExchange(states, index, QUEUED, ENDED) === QUEUED)
          parentPort?.postMessage({ algoserveBatch: batch.id, index, outcome } satisfies BatchOutcome)
      })
    }
  },
)

function tell(message: ThreadLoad): void {
  parentPort?.postMessage(message)
}

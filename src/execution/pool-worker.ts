// The piscina worker: loads the same algorithm modules as the process, once, before its first task
// (the resolved files come in workerData), and runs batches of algorithm calls (thread-batch.ts) off
// the thread that serves HTTP, one call after the other, posting each outcome as its call ends.
import { existsSync } from 'node:fs'
import { parentPort, threadId, workerData } from 'node:worker_threads'
import type { Algorithm, RunContext } from '../algorithms/algorithm.js'
import { loadModuleFile } from '../algorithms/loader.js'
import { loadRegistry, type Registry, versionKey } from '../algorithms/registry.js'
import { stringifyExact } from './exact-json.js'
import { inputRejectionOf } from './input-rejection.js'
import { ignoreProgress, ProgressThrottle, type ProgressUpdate } from './progress.js'
import { MemoryLimitFailure, MemoryWatch } from './run-memory.js'
import {
  type BatchOutcome,
  type BatchProgress,
  type BatchStarted,
  batchViews,
  ENDED,
  QUEUED,
  STARTED,
  type WorkerBatch,
  type WorkerFailure,
  type WorkerOutcome,
  type WorkerTask,
} from './thread-batch.js'
import { timedRun } from './timed-run.js'

export interface PoolWorkerData {
  /** The module files of ALGOSERVE_ALGORITHMS, resolved. */
  algorithmFiles: string[]
  /** The built-in modules are loaded too (ALGOSERVE_PRIME_CHECKER), as in the process. */
  builtIn: boolean
}

/** The versions this thread imported after its start, as their first run came (a reload added them). */
const added = new Map<string, Promise<Algorithm>>()

/** The task's algorithm: loaded at the thread's start, or imported from its file now, once. */
async function algorithmOf(registry: Registry, task: WorkerTask): Promise<Algorithm> {
  const { algorithm: name, version, source } = task
  const found = registry.exact(name, version)
  if (found !== undefined) return found
  if (source === undefined) throw new Error(`Unknown algorithm '${name}' at version ${version}`)
  const key = versionKey(name, version)
  let loading = added.get(key)
  if (loading === undefined) {
    loading = loadModuleFile(source, { checkedByProcess: true })
    added.set(key, loading)
    // A file that could not be read now may be read by the next run.
    loading.catch(() => added.delete(key))
  }
  const algorithm = await loading
  if (algorithm.name !== name || algorithm.version !== version)
    throw new Error(`${source} holds '${algorithm.name}' ${algorithm.version} now, not ${version}`)
  return algorithm
}

/** How a run ended on the thread; `replaceThread`: it passed its memory limit, and its thread ends. */
interface TaskEnd {
  outcome: WorkerOutcome
  replaceThread: boolean
}

async function runTask(registry: Registry, task: WorkerTask, batch: number, index: number): Promise<TaskEnd> {
  const { params, budgetMs, timeoutMs, followed, maxResultBytes, memoryMb, trace } = task
  const deadline = timeoutMs === undefined ? Number.MAX_SAFE_INTEGER : Date.now() + timeoutMs
  let timer: NodeJS.Timeout | undefined
  const throttle = followed
    ? new ProgressThrottle((update: ProgressUpdate) => {
        const message: BatchProgress = { algoserveProgress: batch, index, update }
        parentPort?.postMessage(message)
      })
    : undefined
  const watch = memoryMb === undefined ? undefined : new MemoryWatch(memoryMb)
  // The run is stopped at the deadline by the executor anyway; the signal lets it stop by itself first.
  // Not AbortSignal.timeout: its timer cannot be cleared, and each run's signal stayed on the thread's
  // heap long after the run (about 1 KB a run, until the thread ran out of memory).
  const stop = new AbortController()
  try {
    const found = await algorithmOf(registry, task)
    if (timeoutMs !== undefined) timer = setTimeout(abortAtLimit, Math.min(timeoutMs, 2 ** 31 - 1), stop)
    const progress = throttle?.report ?? ignoreProgress
    const sendable = (result: unknown) => {
      // Past its memory limit, the run fails as such, whatever it returned.
      const over = watch?.check()
      if (over !== undefined) throw over
      checkSendable(result, maxResultBytes)
    }
    const context: RunContext = { signal: stop.signal, deadline, budgetMs, progress }
    if (trace !== undefined) context.trace = trace
    const running = timedRun(found, params, context, sendable)
    const run = await (watch === undefined ? running : Promise.race([running, watch.passed.then(fail)]))
    return { outcome: run, replaceThread: false }
  } catch (error) {
    if (!(error instanceof MemoryLimitFailure)) return { outcome: failureOf(error), replaceThread: false }
    stop.abort(error)
    return { outcome: { failure: error.message, stack: undefined }, replaceThread: true }
  } finally {
    clearTimeout(timer)
    watch?.end()
    // Its last update leaves before the outcome, on the same port: the executor reads it first.
    throttle?.end()
  }
}

const fail = (error: Error): never => {
  throw error
}

function abortAtLimit(stop: AbortController): void {
  stop.abort(new DOMException('The run reached its time limit', 'TimeoutError'))
}

/**
 * Throws when the result could not reach a client: the service writes it as JSON (lossless-json, as the
 * routes and the job store do), so a value that cannot be written, or is longer than its bound, fails
 * here, on the run's thread, rather than after it has been copied to the event loop's.
 */
function checkSendable(result: unknown, maxBytes: number): void {
  let text: string | undefined
  try {
    text = stringifyExact(result)
  } catch (error) {
    // The call stack's end: a cycle, or a nesting deeper than any JSON a client would read.
    const why =
      error instanceof RangeError || /circular/i.test(String(error))
        ? 'it refers to itself or is nested too deeply'
        : String(error).split('\n')[0]
    throw new Error(`its result could not be sent back: ${why}`)
  }
  // Bytes are counted only when the characters could be too many: most results are short.
  const bytes = text === undefined || text.length * 3 <= maxBytes ? 0 : Buffer.byteLength(text)
  if (bytes > maxBytes)
    throw new Error(
      `its result could not be sent back: it is ${bytes} bytes of JSON, more than its limit of ${maxBytes} bytes`,
    )
}

/**
 * Posts a run's outcome; one that cannot be copied to the event loop's thread is a failure, posted instead.
 */
function post(batch: number, index: number, outcome: WorkerOutcome): void {
  try {
    parentPort?.postMessage({ algoserveBatch: batch, index, outcome } satisfies BatchOutcome)
  } catch (error) {
    // JSON leaves a function or a symbol out, but a copy between threads cannot hold one.
    const why =
      (error as Error).name === 'DataCloneError'
        ? 'it holds a value that cannot be copied out of its thread (a function or a symbol)'
        : String(error)
    const failed: WorkerOutcome = { failure: `its result could not be sent back: ${why}`, stack: undefined }
    parentPort?.postMessage({ algoserveBatch: batch, index, outcome: failed } satisfies BatchOutcome)
  }
}

/** Runs the batch's runs in order, each unless the executor took it back before it started. */
async function runBatch(registry: Registry, batch: WorkerBatch): Promise<void> {
  const { received, starts, ends, states } = batchViews(batch.shared)
  received[0] = Date.now()
  for (let index = 0; index < batch.runs.length; index++) {
    // Written before the run is taken, so that the executor sees it once it sees STARTED.
    starts[index] = Date.now()
    if (Atomics.compareExchange(states, index, QUEUED, STARTED) !== QUEUED) continue
    const task = batch.runs[index] as WorkerTask
    if (task.announced) parentPort?.postMessage({ algoserveStarted: batch.id, index } satisfies BatchStarted)
    const { outcome, replaceThread } = await runTask(registry, task, batch.id, index)
    ends[index] = Date.now()
    Atomics.store(states, index, ENDED)
    post(batch.id, index, outcome)
    // What the run holds, and what it still does, end with its thread; its outcome is read first (Node
    // reads a thread's messages before its exit), and the runs behind it go to a fresh thread.
    if (replaceThread) process.exit(1)
  }
}

function failureOf(error: unknown): WorkerFailure {
  const rejected = inputRejectionOf(error)
  if (rejected !== undefined)
    return { failure: rejected.message, stack: undefined, invalidParams: { field: rejected.field } }
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
const data = workerData as PoolWorkerData | undefined
// A file a reload listed may have gone since (a later reload removed its version): the thread loads the
// others, and imports at its first run a version it lacks.
export default loadRegistry(
  (data?.algorithmFiles ?? []).filter((file) => existsSync(file)),
  { checkedByProcess: true },
  data?.builtIn ?? true,
).then(
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

// A synchronous call (POST /invoke, POST /algorithms/{name}/invoke) from its request to its answer:
// its time limit, its run through the executor, and its cancel when the client goes away.
import type { FastifyReply } from 'fastify'
import type { Algorithm } from '../algorithms/algorithm.js'
import type { Executor, RunOptions } from '../execution/executor.js'
import type { TimedRun } from '../execution/timed-run.js'
import { tracing } from '../tracing/seams.js'

/** The time limit of a synchronous run: the algorithm's own, never past ALGOSERVE_INVOKE_TIMEOUT_MS. */
export const syncTimeLimit = (algorithm: Algorithm, invokeTimeoutMs: number): number =>
  Math.min(algorithm.timeoutMs ?? invokeTimeoutMs, invokeTimeoutMs)

export interface SyncCall {
  algorithm: Algorithm
  params: unknown
  budgetMs: number
  timeoutMs: number
}

/**
 * Runs a synchronous call and gives `answer` of its run. A cheap call is run and answered in this turn,
 * without promises; the rest go to a thread or process, and only they are cancelled when the client goes
 * away (a cheap run ends before a disconnect could be seen).
 */
export function answerCall<T>(
  executor: Executor,
  { algorithm, params, budgetMs, timeoutMs }: SyncCall,
  reply: FastifyReply,
  answer: (run: TimedRun) => T,
): T | Promise<T> {
  const options: RunOptions = {
    budgetMs,
    timeoutMs,
    lane: 'invoke',
    logContext: { request_id: reply.request.id },
    trace: tracing.carrier(),
    // Not a getter: an object with an accessor cost about 25 µs more per small /invoke.
    signalOnHop: () => abortOnDisconnect(reply),
  }
  const run = executor.start(algorithm, params, options)
  return run instanceof Promise ? run.then(answer) : answer(run)
}

/** Aborts when the client goes away before its answer is written, so nobody computes for no one. */
function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'))
  })
  return controller.signal
}

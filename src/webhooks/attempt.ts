// One webhook attempt, the same sequence in every backend: send it, time it, decide what it means
// (policy.ts), count and log it, and keep its record for GET /jobs/{job_id}/deliveries. Each backend
// only stores what this returns, its own way (docs/webhooks.md).
import type { FastifyBaseLogger } from 'fastify'
import { tracing } from '../tracing/seams.js'
import { type AttemptStatus, attemptStatus, decide } from './policy.js'
import type { AttemptResult, WebhookMessage } from './sender.js'

/** Sends one webhook attempt (the sender's `send`, in the service). */
export type AttemptDelivery = (message: WebhookMessage, signal: AbortSignal) => Promise<AttemptResult>

/** One attempt as the deliveries of a job show it. Times are unix ms. */
export interface DeliveryAttempt {
  attempt: number
  at: number
  durationMs: number
  statusCode: number | null
  error: string | null
  /** When the next attempt is due, for an attempt that is retried. */
  nextAttemptAt: number | null
}

/** What an attempt's backend needs to make it: the sender, the schedule, and where it is told. */
export interface AttemptRules {
  send: AttemptDelivery
  /** Waits before each retry; their count is the number of retries. */
  retryWaitsMs: readonly number[]
  /** The deliveries' log (component `webhooks`). */
  log: FastifyBaseLogger
  /** Called after each attempt that counts (the deliveries metric). */
  onAttempt(status: AttemptStatus): void
}

/** How an attempt ended for its delivery; every one that counts carries its record. */
export type Attempted =
  | { kind: 'delivered'; record: DeliveryAttempt }
  | { kind: 'retry'; nextAt: number; error: string; record: DeliveryAttempt }
  | { kind: 'failed'; error: string; record: DeliveryAttempt }
  /** Cut short by a shutdown: the delivery is given back untouched, the attempt not counted. */
  | { kind: 'released' }

/** Makes attempt number `attempt` (1-based) of a delivery of job `jobId`, in its job's trace. */
export function attemptDelivery(
  rules: AttemptRules,
  message: WebhookMessage,
  jobId: string,
  attempt: number,
  signal: AbortSignal,
): Promise<Attempted> {
  return tracing.attempt(message.trace, { jobId, webhookId: message.id, attempt }, () =>
    attemptOnce(rules, message, jobId, attempt, signal),
  )
}

async function attemptOnce(
  rules: AttemptRules,
  message: WebhookMessage,
  jobId: string,
  attempt: number,
  signal: AbortSignal,
): Promise<Attempted> {
  const at = Date.now()
  const started = performance.now()
  const result = await rules.send(message, signal)
  const durationMs = performance.now() - started
  const decision = decide(result, attempt, rules.retryWaitsMs)
  const status = attemptStatus(decision)
  if (status !== null) rules.onAttempt(status)
  const context = { job_id: jobId, webhook_id: message.id, attempt }
  switch (decision.kind) {
    case 'released':
      return decision
    case 'delivered':
      return { kind: 'delivered', record: attemptRecord(result, attempt, at, durationMs, null) }
    case 'failed':
      rules.log.warn({ ...context, reason: decision.error }, 'webhook given up')
      return { ...decision, record: attemptRecord(result, attempt, at, durationMs, null) }
    case 'retry': {
      rules.log.info({ ...context, reason: decision.error }, 'webhook attempt failed')
      const nextAt = Date.now() + decision.waitMs
      const record = attemptRecord(result, attempt, at, durationMs, nextAt)
      return { kind: 'retry', nextAt, error: decision.error, record }
    }
  }
}

/** The record of an attempt that counts. */
function attemptRecord(
  result: AttemptResult,
  attempt: number,
  at: number,
  durationMs: number,
  nextAttemptAt: number | null,
): DeliveryAttempt {
  const [statusCode, error] = answerOf(result)
  // One literal: on Node 20 each field added after a spread costs about a microsecond.
  return { attempt, at, durationMs: Math.round(durationMs * 10) / 10, statusCode, error, nextAttemptAt }
}

/** The status code and the error an attempt's record shows. */
function answerOf(result: AttemptResult): [statusCode: number | null, error: string | null] {
  switch (result.kind) {
    case 'success':
      return [result.statusCode, null]
    case 'gone':
      return [410, 'the receiver answered 410 Gone']
    case 'failure':
      return [result.statusCode ?? null, result.error]
    case 'refused':
      return [null, result.error]
    case 'aborted':
      return [null, 'cut short by a shutdown']
  }
}

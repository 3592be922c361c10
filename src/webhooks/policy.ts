// What one webhook attempt means for its delivery (docs/webhooks.md), the same in every backend:
// delivered, retried after the next wait, given up (410, a refused address, or no retry left), or
// given back untouched when a shutdown cut it short.
import type { AttemptResult } from './sender.js'

/** The contract's waits before the 1st, 2nd and 3rd retry. */
export const RETRY_WAITS_MS: readonly number[] = [1000, 5000, 15_000]

export type AttemptDecision =
  | { kind: 'delivered' }
  | { kind: 'retry'; waitMs: number; error: string }
  | { kind: 'failed'; error: string }
  | { kind: 'released' }

/** An attempt that counts, as the deliveries metric labels it. */
export type AttemptStatus = 'success' | 'retry' | 'failed'

/** `attempt` is the 1-based number of the attempt that gave `result`. */
export function decide(result: AttemptResult, attempt: number, waits: readonly number[]): AttemptDecision {
  switch (result.kind) {
    case 'success':
      return { kind: 'delivered' }
    case 'gone':
      return { kind: 'failed', error: 'the receiver answered 410 Gone' }
    case 'refused':
      return { kind: 'failed', error: result.error }
    case 'aborted':
      return { kind: 'released' }
    case 'failure': {
      const wait = waits[attempt - 1]
      return wait === undefined
        ? { kind: 'failed', error: result.error }
        : { kind: 'retry', waitMs: wait, error: result.error }
    }
  }
}

/** The metric status of a decision, or null for an attempt that does not count. */
export function attemptStatus(decision: AttemptDecision): AttemptStatus | null {
  if (decision.kind === 'delivered') return 'success'
  if (decision.kind === 'released') return null
  return decision.kind
}

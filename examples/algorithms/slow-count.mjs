// A slow algorithm that stops when asked: it counts up to `to`, one step every `step_ms`, and checks
// its `signal` between steps, so a cancelled job or a given-up call frees its thread at the next step
// instead of at the time limit. It also reads `deadline` (the time, in ms since the epoch, when the run
// will be stopped): rather than be stopped mid-way it returns what it has counted, saying so.
//
//   ALGOSERVE_ALGORITHMS=examples/algorithms/slow-count.mjs npm start
import { setTimeout as sleep } from 'node:timers/promises'

/** Time kept for the answer to get back before the deadline: a timer can fire late on a busy machine. */
const MARGIN_MS = 250

export default {
  name: 'SlowCount',
  version: '1.0.0',
  description: 'Counts to `to`, one step every `step_ms`; stops early when cancelled or near its deadline.',
  params: {
    type: 'object',
    required: ['to'],
    additionalProperties: false,
    properties: {
      to: { type: 'integer', minimum: 0, maximum: 100000 },
      step_ms: { type: 'integer', minimum: 0, maximum: 10000, default: 100 },
    },
  },
  result: {
    type: 'object',
    required: ['counted', 'complete'],
    additionalProperties: false,
    properties: {
      counted: { type: 'integer', description: 'How far it counted.' },
      complete: { type: 'boolean', description: 'False when it stopped early to meet its deadline.' },
    },
  },
  examples: [{ params: { to: 5, step_ms: 100 } }],
  timeoutMs: 60000,
  async run({ to, step_ms: stepMs = 100 }, { signal, deadline }) {
    let counted = 0
    while (counted < to) {
      if (Date.now() + stepMs + MARGIN_MS >= deadline) return { counted, complete: false }
      // Rejects with the signal's reason as soon as the run is given up, even mid-step.
      await sleep(stepMs, undefined, { signal })
      counted++
    }
    return { counted, complete: true }
  },
}

// A module's progress (context.progress) on a real worker thread, through a real Executor: what reaches
// the caller's hook on the main thread, and what does not change for the run.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Algorithm } from '../../src/algorithms/algorithm.js'
import { loadModuleFile } from '../../src/algorithms/loader.js'
import { Executor } from '../../src/execution/executor.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { moduleSource, writeModules } from '../helpers/algorithms.js'

// Counts to `calls`, reporting each step, and spins a millisecond every thousand steps so that the run
// lasts long enough for several updates to leave its thread. Then it makes the calls that are ignored
// or clamped, when `odd` is set.
const modules = writeModules({
  'counter.mjs': moduleSource(`
  name: 'Counter',
  version: '1.0.0',
  description: 'Counts, reporting every step.',
  params: { type: 'object', required: ['calls'], properties: { calls: { type: 'integer' }, odd: { type: 'boolean' } } },
  result: { type: 'object', required: ['total'], properties: { total: { type: 'integer' } } },
  run({ calls, odd }, { progress }) {
    let total = 0
    for (let i = 1; i <= calls; i++) {
      total += i
      progress(i / calls, 'step ' + i)
      if (i % 1000 === 0) for (const end = performance.now() + 1; performance.now() < end; );
    }
    if (odd) {
      progress(Number.NaN, 'not a number')
      progress(Number.POSITIVE_INFINITY, 'infinite')
      progress('0.5', 'a string')
      progress(-3, 'below')
      progress(7, { not: 'a string' })
    }
    return { total }
  },`),
})

let executor: Executor
let counter: Algorithm
before(async () => {
  counter = await loadModuleFile(modules.file('counter.mjs'))
  executor = new Executor({ threads: 1, algorithmFiles: [modules.file('counter.mjs')] }, createMetrics())
  await executor.warm()
})
after(async () => {
  await executor.close()
  modules.remove()
})

const CALLS = 200_000
const TOTAL = (CALLS * (CALLS + 1)) / 2

/** Runs the counter with a hook that records each update as it reaches this thread. */
async function followed(params: Record<string, unknown>) {
  const updates: unknown[][] = []
  let settled = false
  const run = await executor.run(counter, params, {
    budgetMs: 1000,
    lane: 'job',
    progress: (...update: unknown[]) => {
      assert.equal(settled, false, 'no update after the run has settled')
      updates.push(update)
    },
  })
  settled = true
  return { run, updates }
}

test("a module's progress reaches the hook on the main thread in order, ending with its last update", async () => {
  const { run, updates } = await followed({ calls: CALLS })
  assert.deepEqual(run.result, { total: TOTAL })
  // The first update leaves at once, the last one at the end; the ones between are coalesced.
  assert.deepEqual(updates[0], [1 / CALLS, 'step 1'])
  assert.deepEqual(updates.at(-1), [1, `step ${CALLS}`])
  assert.ok(updates.length >= 3, `updates between the first and the last (${updates.length})`)
  assert.ok(updates.length < CALLS / 100, `coalesced (${updates.length} of ${CALLS})`)
  for (let i = 1; i < updates.length; i++) {
    const [previous, current] = [updates[i - 1] as [number, string], updates[i] as [number, string]]
    assert.ok(current[0] > previous[0], `in order: ${previous} then ${current}`)
    assert.equal(current[1], `step ${Math.round(current[0] * CALLS)}`)
  }
  // Nothing comes later either: an update of a run that has ended is dropped.
  const count = updates.length
  await sleep(200)
  assert.equal(updates.length, count)
})

test('a fraction out of range is clamped; a non-finite one is ignored, and a message that is not a string left out', async () => {
  const { updates } = await followed({ calls: 10, odd: true })
  // Everything after the first update comes within the interval: only the last one held is sent.
  assert.deepEqual(updates, [[0.1, 'step 1'], [1]])
})

test('a hook that throws does not fail the run', async () => {
  let calls = 0
  const run = await executor.run(
    counter,
    { calls: CALLS },
    {
      budgetMs: 1000,
      progress: () => {
        calls++
        throw new Error('a broken hook')
      },
    },
  )
  assert.deepEqual(run.result, { total: TOTAL })
  assert.ok(calls >= 2, `the hook was called (${calls})`)
})

test('a followed run aborted from its hook rejects, tells the hook nothing after, and the next one reports to its end', async () => {
  const controller = new AbortController()
  const updates: unknown[][] = []
  const run = executor.run(
    counter,
    { calls: 1_000_000_000 },
    {
      budgetMs: 1000,
      signal: controller.signal,
      progress: (...update: unknown[]) => {
        updates.push(update)
        controller.abort(new Error('cancelled'))
      },
    },
  )
  await assert.rejects(run, /cancelled/)
  const count = updates.length
  assert.ok(count >= 1)
  const { updates: next } = await followed({ calls: 10 })
  assert.deepEqual(next.at(-1), [1, 'step 10'])
  assert.equal(updates.length, count, 'nothing more from the aborted run')
})

test('without a hook the run is the same', async () => {
  const run = await executor.run(counter, { calls: CALLS, odd: true }, { budgetMs: 1000 })
  assert.deepEqual(run.result, { total: TOTAL })
})

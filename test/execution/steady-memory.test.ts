// Module calls leave nothing behind on their worker thread: after tens of thousands of calls with a
// time limit and a progress hook, the thread's heap is where it was after the warm-up, and a thread with a
// small heap limit never runs out of memory. A kilobyte kept per call would be tens of MB here.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Algorithm } from '../../src/algorithms/algorithm.js'
import { loadModuleFile } from '../../src/algorithms/loader.js'
import { Executor, type RunOptions } from '../../src/execution/executor.js'

type CallOptions = Omit<RunOptions, 'budgetMs'>

import { createMetrics } from '../../src/metrics/metrics.js'
import { moduleSource, writeModules } from '../helpers/algorithms.js'

const CALLS = 60_000
const IN_FLIGHT = 64
/** Far below what CALLS calls keeping a kilobyte each would hold, far above a heap's own swings. */
const MAX_GROWTH_MB = 24

const modules = writeModules({
  'step.mjs': moduleSource(`
  name: 'Step',
  version: '1.0.0',
  description: 'Reports progress once and adds one.',
  params: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
  result: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
  timeoutMs: 5000,
  run({ n }, { progress, signal }) {
    progress(0.5)
    signal.throwIfAborted()
    return { n: n + 1 }
  },`),
  'heap.mjs': moduleSource(`
  name: 'Heap',
  version: '1.0.0',
  description: "Its thread's V8 heap in use, in bytes.",
  params: { type: 'object' },
  result: { type: 'object', required: ['used'], properties: { used: { type: 'integer' } } },
  async run() {
    const v8 = await import('node:v8')
    return { used: v8.getHeapStatistics().used_heap_size }
  },`),
})

let executor: Executor
let step: Algorithm
let heap: Algorithm
before(async () => {
  step = await loadModuleFile(modules.file('step.mjs'))
  heap = await loadModuleFile(modules.file('heap.mjs'))
  executor = new Executor(
    { threads: 1, threadHeapMb: 64, algorithmFiles: [modules.file('step.mjs'), modules.file('heap.mjs')] },
    createMetrics(),
  )
  await executor.warm()
})
after(async () => {
  await executor.close()
  modules.remove()
})

/** Runs `calls` calls of Step, IN_FLIGHT at a time, every other one followed; returns the failures. */
async function callMany(calls: number): Promise<string[]> {
  const failures: string[] = []
  let next = 0
  const caller = async () => {
    while (next < calls) {
      const options: CallOptions = { lane: next % 4 === 0 ? 'job' : 'invoke', timeoutMs: 5000 }
      if (next % 2 === 0) options.progress = () => {}
      const n = next++
      await executor.run(step, { n }, { budgetMs: 1000, ...options }).then(
        (run) => assert.deepEqual(run.result, { n: n + 1 }),
        (error: unknown) => failures.push(String(error)),
      )
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, caller))
  return failures
}

const heapUsedMb = async (): Promise<number> =>
  ((await executor.run(heap, {}, { budgetMs: 1000 })).result as { used: number }).used / 2 ** 20

test("tens of thousands of calls leave the thread's heap as it was after the warm-up", async () => {
  assert.deepEqual(await callMany(5000), [])
  const baseline = await heapUsedMb()
  const failures = await callMany(CALLS)
  assert.deepEqual(failures.slice(0, 3), [], `${failures.length} of ${CALLS} calls failed`)
  const grown = (await heapUsedMb()) - baseline
  assert.ok(grown < MAX_GROWTH_MB, `the heap grew by ${grown.toFixed(1)} MB over ${CALLS} calls`)
})

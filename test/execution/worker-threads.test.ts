// Runs that wait for a thread go to it together, as a batch, through a real Executor on real worker
// threads: each run keeps its own answer, its own time limit counted from its own start, and its own
// abort; the runs behind one that is stopped, or that holds its thread for long, run elsewhere.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Algorithm } from '../../src/algorithms/algorithm.js'
import { loadModuleFile } from '../../src/algorithms/loader.js'
import { RunTimeLimitError } from '../../src/errors.js'
import { Executor, type RunOptions } from '../../src/execution/executor.js'

type CallOptions = Omit<RunOptions, 'budgetMs'>

import { createMetrics } from '../../src/metrics/metrics.js'
import { moduleSource, writeModules } from '../helpers/algorithms.js'

// Holds its thread for `ms` (forever when `ms` is -1) without looking at its signal, and tells which
// thread ran it and how many runs that thread had begun, this one included.
const modules = writeModules({
  'busy.mjs': moduleSource(`
  name: 'Busy',
  version: '1.0.0',
  description: 'Holds its thread.',
  params: { type: 'object', required: ['ms'], properties: { ms: { type: 'integer' } } },
  result: { type: 'object', required: ['thread', 'run'], properties: { thread: { type: 'integer' }, run: { type: 'integer' } } },
  async run({ ms }) {
    const { threadId } = await import('node:worker_threads')
    globalThis.busyRuns = (globalThis.busyRuns ?? 0) + 1
    for (const end = performance.now() + (ms === -1 ? Infinity : ms); performance.now() < end; );
    return { thread: threadId, run: globalThis.busyRuns }
  },`),
})

let executor: Executor
let busy: Algorithm
before(async () => {
  busy = await loadModuleFile(modules.file('busy.mjs'))
  executor = new Executor({ threads: 1, algorithmFiles: [modules.file('busy.mjs')] }, createMetrics())
  await executor.warm()
})
after(async () => {
  await executor.close()
  modules.remove()
})

interface Held {
  thread: number
  run: number
}

const hold = (ms: number, options: CallOptions = {}): Promise<Held> =>
  executor.run(busy, { ms }, { budgetMs: 60_000, lane: 'job', ...options }).then((run) => run.result as Held)

/** Takes the only thread for `ms`: the runs asked for in the same tick go to it in the same batch. */
const occupy = (ms: number) => hold(ms)

test('runs that waited go to the thread together and each gets its own answer, in their order', async () => {
  const first = occupy(150)
  const waiting = Array.from({ length: 20 }, () => hold(0))
  const ended: number[] = []
  for (const [index, run] of waiting.entries()) run.then(() => ended.push(index))
  const [held, ...answers] = await Promise.all([first, ...waiting])
  assert.deepEqual(
    ended,
    [...ended].sort((a, b) => a - b),
    'they ended in the order they were asked for',
  )
  for (const [index, answer] of answers.entries()) {
    assert.equal(answer.thread, held.thread)
    assert.equal(answer.run, held.run + index + 1)
  }
})

test("a run's time limit counts from its own start on the thread, not from its batch's", async () => {
  const first = occupy(100)
  // Each holds its thread for 400 ms of its 600: the second begins 400 ms into the batch.
  const runs = [hold(400, { timeoutMs: 600 }), hold(400, { timeoutMs: 600 })]
  const [one, two] = (await Promise.all([first, ...runs])).slice(1) as [Held, Held]
  assert.equal(two.run, one.run + 1)
})

test('a run past its limit stops its thread alone: the runs ended keep their answers, those behind run on the next thread', async () => {
  const first = occupy(100)
  const before = hold(10)
  const stuck = hold(-1, { timeoutMs: 300 })
  const behind = [hold(10), hold(10)]
  const started = performance.now()
  await assert.rejects(stuck, RunTimeLimitError)
  assert.ok(performance.now() - started < 1500, 'stopped within its limit and a second')
  const [held, ended, ...others] = await Promise.all([first, before, ...behind])
  assert.equal(ended.thread, held.thread)
  for (const other of others)
    assert.notEqual(other.thread, held.thread, 'the runs behind ran on a new thread')
  assert.deepEqual(
    others.map((other) => other.run),
    [1, 2],
  )
})

test('a run of a batch aborted before it begins never runs, and nothing else is stopped', async () => {
  const first = occupy(100)
  const long = hold(400)
  const controller = new AbortController()
  const aborted = hold(0, { signal: controller.signal })
  const last = hold(0)
  // The batch is on the thread, in its long run.
  await sleep(250)
  const abortedAt = performance.now()
  controller.abort(new Error('gone before it began'))
  await assert.rejects(aborted, /gone before it began/)
  assert.ok(performance.now() - abortedAt < 100, 'rejected at once, not after the run before it')
  const [, held, ended] = await Promise.all([first, long, last])
  assert.equal(ended.thread, held.thread, 'the thread was not stopped')
  assert.equal(ended.run, held.run + 1, 'the aborted run never began')
})

test('behind a run that holds its thread for a second, the rest of its batch runs on the spare thread', async () => {
  const first = occupy(100)
  const finished: string[] = []
  const long = hold(1600).then((held) => {
    finished.push('long')
    return held
  })
  const short = hold(0).then((held) => {
    finished.push('short')
    return held
  })
  const [, longHeld, shortHeld] = await Promise.all([first, long, short])
  assert.deepEqual(finished, ['short', 'long'])
  assert.notEqual(shortHeld.thread, longHeld.thread)
})

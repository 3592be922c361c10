// The executor with process algorithms (src/execution/executor.ts and process-pool.ts together): their
// runs go to their processes, never to a worker thread; the caller's progress hook hears their progress
// lines; failures are AlgorithmErrors counted in the metrics; a full lane is a 503 that counts no run; and
// closing the executor stops the processes.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { loadManifest } from '../../src/algorithms/process-manifest.js'
import { Registry } from '../../src/algorithms/registry.js'
import { AlgorithmError, ServiceUnavailableError } from '../../src/errors.js'
import { Executor } from '../../src/execution/executor.js'
import { ProcessPoolSet } from '../../src/execution/process-pool.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { until } from '../helpers/time.js'

const misbehaving = loadManifest(
  fileURLToPath(new URL('../fixtures/misbehaving/on-demand-js/algorithm.json', import.meta.url)),
)
const registry = new Registry([misbehaving])
const metrics = createMetrics()
let pools: ProcessPoolSet
let executor: Executor
before(() => {
  pools = new ProcessPoolSet(registry, { invokeQueueTimeoutMs: 0 })
  executor = new Executor({ threads: 1, processes: pools }, metrics)
  pools.start(pino({ level: 'silent' }) as unknown as FastifyBaseLogger)
})
after(() => executor.close())

const count = async (status: string) =>
  (await metrics.algorithmExecutions.get()).values.find(
    (value) => value.labels.algorithm === 'Misbehaving' && value.labels.status === status,
  )?.value ?? 0

test('a run goes to the process, and the progress hook hears its progress lines', async () => {
  const seen: [number, string | undefined][] = []
  const run = await executor.run(
    misbehaving,
    { mode: 'progress' },
    { budgetMs: 1000, lane: 'job', progress: (fraction, message) => seen.push([fraction, message]) },
  )
  assert.equal((run.result as { pid: number }).pid, pools.pool(misbehaving)?.pids[0])
  assert.deepEqual(seen, [
    [0.25, undefined],
    [0.5, 'half way'],
    [1, undefined],
  ])
  assert.equal(await count('success'), 1)
})

test('a crash is an AlgorithmError counted as an error', async () => {
  await assert.rejects(
    async () => executor.run(misbehaving, { mode: 'crash' }, { budgetMs: 1000 }),
    (error: unknown) => {
      assert.ok(error instanceof AlgorithmError)
      assert.equal(
        error.message,
        "The algorithm 'Misbehaving' failed while running: its process exited with code 3 during the call",
      )
      return true
    },
  )
  assert.equal(await count('error'), 1)
})

test('with the process busy, an /invoke call is a 503 that counts no run', async () => {
  await until(() => pools.pool(misbehaving)?.pids.length === 1, 10_000, 'the process replaced')
  const busy = executor.run(misbehaving, { mode: 'hang' }, { budgetMs: 1000, lane: 'job', timeoutMs: 500 })
  await assert.rejects(async () => executor.run(misbehaving, {}, { budgetMs: 1000 }), ServiceUnavailableError)
  await assert.rejects(busy, /exceeded its time limit of 0.5 s/)
  assert.equal(await count('error'), 2)
})

test('closing the executor stops the processes', async () => {
  const pids = await until(
    () => {
      const running = pools.pool(misbehaving)?.pids ?? []
      return running.length === 1 && running
    },
    10_000,
    'a process',
  )
  await executor.close()
  for (const pid of pids) assert.throws(() => process.kill(pid, 0))
})

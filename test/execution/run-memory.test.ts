// A module that declares memoryMb is held to it on its worker thread: a run that holds more (here in
// Buffers, which the thread's heap limit does not count) fails saying so, whether it waits while it
// holds them or returns at once; its thread is replaced, and the next call succeeds.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { startApp, type TestApp } from '../helpers/app.js'
import { invoke as invokeAlgorithm } from '../helpers/misbehaviour.js'

const FIXTURE = join(import.meta.dirname, '../fixtures/misbehaving/holds-buffers.mjs')
/** Shorter than the 10 s the waiting run would hold its Buffers: a bound on a hang, not a timing. */
const HANG_MS = 8000

let server: TestApp
before(async () => {
  server = await startApp({ algorithms: [FIXTURE, 'examples/algorithms/collatz.mjs'], workerThreads: 1 })
})
after(() => server.close())

const invoke = (name: string, params: unknown) => invokeAlgorithm(server.url, name, params, HANG_MS)

const PASSED =
  /^The algorithm 'HoldsBuffers' failed while running: its run passed its memory limit of 64 MB \(it held \d+ MB more\)$/

test('a run within its memoryMb succeeds, again and again on the same thread', async () => {
  for (let i = 0; i < 5; i++) {
    const { status, body } = await invoke('HoldsBuffers', { mb: 32 })
    assert.equal(status, 200)
    assert.deepEqual(body.result, { held: 32 })
  }
})

// Well past the limit: the garbage of the calls before (5 x 32 MB), collected during the run, hides as much.
const OVER_MB = 384

test('a run that holds more than its memoryMb and returns fails saying so; the next call succeeds', async () => {
  const { status, body } = await invoke('HoldsBuffers', { mb: OVER_MB })
  assert.equal(status, 500)
  assert.equal(body.error, 'ALGORITHM_ERROR')
  assert.match(body.message as string, PASSED)
  assert.equal((await invoke('Collatz', { n: 27 })).status, 200)
})

test('a run that holds more than its memoryMb while it waits is stopped then, not at its end', async () => {
  const { status, body } = await invoke('HoldsBuffers', { mb: OVER_MB, wait: true })
  assert.equal(status, 500)
  assert.match(body.message as string, PASSED)
  assert.equal((await invoke('Collatz', { n: 27 })).status, 200)
  assert.equal((await invoke('HoldsBuffers', { mb: 32 })).status, 200)
})

// The embedded backend's own timing, beyond what every backend does (test/jobs/conformance.test.ts).
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { RunJob } from '../../../src/jobs/backend.js'
import { openEmbeddedBackend } from '../../../src/jobs/embedded/backend.js'
import { tempDataDir } from '../../helpers/app.js'
import { SUITE_LOADED, silentLog } from '../../helpers/backends.js'
import { until } from '../../helpers/time.js'

test('a submitted job starts in the turn of the event loop that commits it, not after the next turn', async (t) => {
  const dataDir = tempDataDir()
  const backend = openEmbeddedBackend({
    dataDir,
    ttlMs: 60_000,
    maxPending: 100,
    retryWaitsMs: [50],
    countEnded: () => {},
    log: silentLog,
  })
  t.after(async () => {
    await backend.close()
    rmSync(dataDir, { recursive: true, force: true })
  })
  let turnEnded = false
  const startedInTurn: boolean[] = []
  const run: RunJob = async () => {
    startedInTurn.push(!turnEnded)
    return { status: 'completed', result: '1', metadata: '{}' }
  }
  const consumer = backend.consumeJobs(run, { concurrency: 2, algorithms: ['Echo'], loaded: SUITE_LOADED })
  t.after(() => consumer.stop(0))
  // The consumer's first look, which finds nothing, is over.
  await sleep(50)
  for (let i = 0; i < 3; i++) {
    turnEnded = false
    const job = {
      id: `0000000000a${i}`,
      algorithm: 'Echo',
      version: '1.0.0',
      params: '{}',
      webhook: null,
      cheap: true,
    }
    const submitted = backend.submit({ ...job, createdAt: Date.now() })
    // The store commits a turn's inserts in a callback of the turn's end; this one follows it there.
    setImmediate(() => {
      turnEnded = true
    })
    await submitted
    await until(() => startedInTurn.length === i + 1, 5000, 'the job ran')
  }
  assert.deepEqual(startedInTurn, [true, true, true])
})

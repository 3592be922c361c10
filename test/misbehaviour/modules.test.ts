// Module algorithms that misbehave (test/fixtures/misbehaving/*.mjs), on each job backend: a loop that
// never yields, Buffers far past the declared memory, a result that cannot be sent back. Each fails its
// own call or job, clearly, while the service keeps answering; its slot is free afterwards (a good call
// to the same algorithm succeeds) and no process is left behind. The service is `algoserve serve` in a
// child process, one per backend: its memory is its own, and a run it never lets go of cannot keep this
// file from ending.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { tempDataDir } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { type Child, listening, start } from '../helpers/child.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import {
  assertNothingLeft,
  fixture,
  HELD_LOOP_MS,
  invoke,
  NOT_LINUX,
  sampleHealth,
  sampleRss,
  watchProcesses,
} from '../helpers/misbehaviour.js'
import { sleep } from '../helpers/time.js'

const MODULES = [
  'returns-function.mjs',
  'returns-symbol.mjs',
  'returns-cycle.mjs',
  'busy-loop.mjs',
  'big-buffers.mjs',
].map(fixture)
/** The limit the three modules of bad results declare. */
const RESULT_MODULES_LIMIT_MS = 3000
const MB = 1024 * 1024

forEachBackend((backend) => {
  let service: Child
  let url: string
  let pid: number
  before(async () => {
    const dataDir = tempDataDir()
    after(() => rmSync(dataDir, { recursive: true, force: true }))
    service = start(
      [
        'serve',
        '--data-dir',
        dataDir,
        '--port',
        '0',
        '--worker-threads',
        '2',
        '--algorithms',
        MODULES.join(','),
      ],
      backend.childEnv(),
    )
    url = await listening(service)
    pid = service.process.pid as number
    // Warm: what /healthz measures below is the run's effect, not a first request's compiling.
    const warm = sampleHealth(url)
    await sleep(500)
    await warm.stop()
  })
  after(async () => {
    // SIGKILL: a service that cannot stop a bad run would not stop on SIGTERM either.
    service.process.kill('SIGKILL')
    await service.exit
  })

  /** A good call to `name` succeeds: the slot the bad run held is free again. */
  const assertGoodCall = async (name: string) => {
    const good = await invoke(url, name, { mode: 'good' }, 10_000)
    assert.equal(good.status, 200, `a good call after the bad one: ${JSON.stringify(good.body)}`)
    assert.equal(good.body.result?.ok, true)
  }

  test('BusyLoop: the time-limit error in about 1 s, /healthz quick meanwhile, the next call succeeds', {
    skip: NOT_LINUX,
  }, async (t) => {
    const watch = watchProcesses(pid)
    const health = sampleHealth(url)
    t.after(() => health.stop())
    const call = await invoke(url, 'BusyLoop', {}, 10_000)
    const latencies = await health.stop()
    assert.equal(call.status, 500, JSON.stringify(call.body))
    assert.equal(call.body.error, 'ALGORITHM_ERROR')
    // RunTimeLimitError's words.
    assert.equal(
      call.body.message,
      "The algorithm 'BusyLoop' failed while running: it exceeded its time limit of 1 s and was stopped",
    )
    // The limit, plus a second for the thread to be stopped, plus room for a loaded machine.
    assert.ok(call.ms >= 900 && call.ms < 4000, `answered after ${Math.round(call.ms)} ms`)
    assert.ok(latencies.count >= 20, `only ${latencies.count} /healthz answers`)
    assert.ok(latencies.p99 < HELD_LOOP_MS, `/healthz p99 ${latencies.p99.toFixed(1)} ms during the loop`)
    await assertGoodCall('BusyLoop')
    await assertNothingLeft(watch, pid)
  })

  test('BigBuffers: 1.5 GB of Buffers past memoryMb 128 fails saying so, and the memory stays bounded', {
    skip: NOT_LINUX,
  }, async () => {
    const watch = watchProcesses(pid)
    const rss = sampleRss(pid)
    const call = await invoke(url, 'BigBuffers', {}, 30_000)
    const peak = rss.stop()
    assert.equal(call.status, 500, `answered ${call.status}: ${JSON.stringify(call.body).slice(0, 300)}`)
    assert.equal(call.body.error, 'ALGORITHM_ERROR')
    assert.match(call.body.message ?? '', /memory limit/)
    assert.ok(peak < 600 * MB, `the service's RSS reached ${Math.round(peak / MB)} MB`)
    await assertGoodCall('BigBuffers')
    await assertNothingLeft(watch, pid)
  })

  describe('a result that cannot be sent back', { skip: NOT_LINUX }, () => {
    for (const name of ['ReturnsCycle', 'ReturnsFunction', 'ReturnsSymbol']) {
      test(`${name}: the call fails once with ALGORITHM_ERROR, its job fails, the next call succeeds`, async () => {
        const watch = watchProcesses(pid)
        const call = await invoke(url, name, {}, RESULT_MODULES_LIMIT_MS + 5000)
        assert.equal(call.status, 500, JSON.stringify(call.body))
        assert.equal(call.body.error, 'ALGORITHM_ERROR')
        assert.match(call.body.message ?? '', new RegExp(`^The algorithm '${name}' failed while running`))
        assert.match(call.body.message ?? '', /could not be sent back/)

        const created = await createJob(url, { algorithm: name, params: {} })
        assert.equal(created.status, 202)
        const job = await waitForJob(
          url,
          String(created.json.job_id),
          (seen) => seen.status !== 'pending' && seen.status !== 'running',
          RESULT_MODULES_LIMIT_MS + 2000,
        )
        assert.equal(job.status, 'failed')
        assert.match(job.error ?? '', /could not be sent back/)

        await assertGoodCall(name)
        await assertNothingLeft(watch, pid)
      })
    }
  })
})

// Program algorithms that misbehave (test/fixtures/misbehaving/*-js, *-py), on each job backend: a
// grandchild that leaves the group holding stdout, a 15 MB answer, results and progress past their
// declared bounds, answers that belong to no call, a program that exits after every answer, a flood of
// stderr, memory past memoryMb. Each fails its own call at most, clearly; the next call to it succeeds
// (its slot is free, its process replaced if need be) and nothing it started is left behind.
import assert from 'node:assert/strict'
import { after, before, describe, type TestContext, test } from 'node:test'
import { outputThread } from '../../src/execution/output-thread.js'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import {
  assertNothingLeft,
  fixture,
  HELD_LOOP_MS,
  invoke,
  killLeft,
  NO_PYTHON,
  NOT_LINUX,
  type ProcessWatch,
  programProcesses,
  sampleHealth,
  watchProcesses,
} from '../helpers/misbehaviour.js'
import { sleep, until } from '../helpers/time.js'

const FOLDERS: Record<string, string> = {
  EscapingGrandchildJs: fixture('escaping-grandchild-js'),
  EscapingGrandchildPy: fixture('escaping-grandchild-py'),
  HugeLine: fixture('huge-line-js'),
  HugeLinePy: fixture('huge-line-py'),
  OverLimits: fixture('over-limits-js'),
  OverLimitsPy: fixture('over-limits-py'),
  StrayAnswers: fixture('stray-answers-js'),
  StrayAnswersPy: fixture('stray-answers-py'),
  ExitAfterAnswerJs: fixture('exit-after-answer-js'),
  ExitAfterAnswerPy: fixture('exit-after-answer-py'),
  StderrFlood: fixture('stderr-flood-js'),
  StderrFloodPy: fixture('stderr-flood-py'),
  MemoryHogPy: fixture('memory-hog-py'),
}
/** The time limit of the programs that hang (their algorithm.json). */
const LIMIT_MS = 1000
const MB = 1024 * 1024
const TIME_LIMIT_WORDS = 'it exceeded its time limit of 1 s and was stopped'
/** A row's program in JavaScript, then its Python twin, which is skipped without python3. */
const bothLanguages = (name: string) =>
  [name, `${name}Py`].map((each) => ({ name: each, skip: each.endsWith('Py') && NO_PYTHON }))

forEachBackend((backend) => {
  let server: TestApp
  /** Bytes the service has logged so far. */
  let logged = 0
  before(async () => {
    server = await backend.start(
      { algorithms: Object.values(FOLDERS), logLevel: 'info' },
      {
        logger: {
          level: 'info',
          stream: {
            write: (line: string) => {
              logged += Buffer.byteLength(line)
            },
          },
        },
      },
    )
    // The thread of long lines starts here, not in a row: under tsx it starts a compiler process of its
    // own, which a row's watch would count as left behind.
    const line = new TextEncoder().encode('{"id":"0","result":{}}')
    await outputThread.read([line.buffer as ArrayBuffer], line.length, '{}')
  })
  after(() => server.close())

  /** The processes the service keeps: one for each program. */
  const kept = () => Object.values(FOLDERS).flatMap((folder) => programProcesses(process.pid, folder))

  /** Watches what the test's row starts, and ends whatever of it a failed assertion left running. */
  const watchRow = (t: TestContext): ProcessWatch => {
    const watch = watchProcesses(process.pid)
    t.after(() => killLeft(watch.stop(), kept()))
    return watch
  }

  /** A good call to `name` succeeds: its slot is free again, its process replaced if it had to be. */
  const assertGoodCall = async (name: string) => {
    const good = await invoke(server.url, name, { mode: 'good' }, 10_000)
    assert.equal(good.status, 200, `a good call after the bad one: ${JSON.stringify(good.body)}`)
    assert.equal(good.body.result?.ok, true)
  }

  const assertFailed = (answer: Awaited<ReturnType<typeof invoke>>, name: string, words: RegExp) => {
    const shown = JSON.stringify(answer.body).slice(0, 300)
    assert.equal(answer.status, 500, `answered ${answer.status}: ${shown}`)
    assert.equal(answer.body.error, 'ALGORITHM_ERROR')
    assert.match(answer.body.message ?? '', new RegExp(`^The algorithm '${name}' failed while running: `))
    assert.match(answer.body.message ?? '', words)
  }

  describe('a grandchild that leaves the group and keeps stdout open, then a hang', {
    skip: NOT_LINUX,
  }, () => {
    for (const name of ['EscapingGrandchildJs', 'EscapingGrandchildPy']) {
      test(name, { skip: name.endsWith('Py') && NO_PYTHON }, async (t) => {
        const watch = watchRow(t)
        // The limit plus the kill grace, with room for a loaded machine.
        const call = await invoke(server.url, name, {}, LIMIT_MS + 5000)
        assertFailed(call, name, new RegExp(TIME_LIMIT_WORDS))
        assert.ok(
          watch.seen.some((entry) => entry.sid === entry.pid),
          'the program started a process in a session of its own',
        )
        await assertGoodCall(name)
        await assertNothingLeft(watch, process.pid, Object.values(FOLDERS))
      })
    }
  })

  for (const { name, skip } of bothLanguages('HugeLine')) {
    test(`${name}: a legal 15 MB answer arrives intact while /healthz stays quick`, {
      skip: NOT_LINUX || skip,
    }, async (t) => {
      const watch = watchRow(t)
      const health = sampleHealth(server.url)
      t.after(() => health.stop())
      const response = await fetch(`${server.url}/algorithms/${name}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        signal: AbortSignal.timeout(30_000),
      })
      // Measured until the answer starts: reading 15 MB of JSON here is this test's own event loop's work,
      // which it shares with the service.
      const latencies = await health.stop()
      const body = (await response.json()) as { result?: { pad?: string } }
      assert.equal(response.status, 200, JSON.stringify(body).slice(0, 300))
      const pad = body.result?.pad as string
      assert.equal(pad.length, 15 * MB)
      assert.match(pad, /^x+$/)
      assert.ok(latencies.count >= 10, `only ${latencies.count} /healthz answers`)
      assert.ok(latencies.p99 < HELD_LOOP_MS, `/healthz p99 ${latencies.p99.toFixed(1)} ms during the answer`)
      await assertGoodCall(name)
      await assertNothingLeft(watch, process.pid, Object.values(FOLDERS))
    })
  }

  describe('OverLimits: past maxResultBytes or maxProgressBytes', { skip: NOT_LINUX }, () => {
    const cases = [
      { mode: 'big-result', words: /result.*limit|limit.*result/ },
      { mode: 'big-progress', words: /progress.*limit|limit.*progress/ },
    ]
    for (const { name, skip } of bothLanguages('OverLimits')) {
      for (const { mode, words } of cases) {
        test(`${name} ${mode}: the call fails in its own words`, { skip }, async (t) => {
          const watch = watchRow(t)
          assertFailed(await invoke(server.url, name, { mode }, 10_000), name, words)
          await assertGoodCall(name)
          await assertNothingLeft(watch, process.pid, Object.values(FOLDERS))
        })
      }
    }
  })

  describe('StrayAnswers: an answer for no call is dropped, and the next call succeeds', {
    skip: NOT_LINUX,
  }, () => {
    for (const { name, skip } of bothLanguages('StrayAnswers')) {
      const strays = [
        ['twice', 'the same call answered again while the next call runs'],
        ['unknown-id', 'an answer for an id never given, while the next call runs'],
      ]
      for (const [mode, what] of strays) {
        test(`${name} ${mode}: ${what}`, { skip }, async (t) => {
          const watch = watchRow(t)
          // 'twice' answers its call again 150 ms later, while the next call (500 ms) runs.
          const first = await invoke(server.url, name, { mode })
          assert.equal(first.status, 200, JSON.stringify(first.body))
          const next = await invoke(server.url, name, { mode: 'slow' })
          assert.equal(next.status, 200, `the next call: ${JSON.stringify(next.body)}`)
          assert.equal(next.body.result?.mode, 'slow')
          await assertGoodCall(name)
          await assertNothingLeft(watch, process.pid, Object.values(FOLDERS))
        })
      }

      test(`${name} late: the answer comes 200 ms after the time limit, while the next call runs`, {
        skip,
      }, async (t) => {
        const watch = watchRow(t)
        const first = await invoke(server.url, name, { mode: 'late' }, 2000 + 5000)
        assertFailed(first, name, /it exceeded its time limit of 2 s and was stopped/)
        const next = await invoke(server.url, name, { mode: 'slow' })
        assert.equal(next.status, 200, `the next call: ${JSON.stringify(next.body)}`)
        assert.equal(next.body.result?.mode, 'slow')
        await assertGoodCall(name)
        await assertNothingLeft(watch, process.pid, Object.values(FOLDERS))
      })
    }
  })

  describe('a program that exits after every answer', { skip: NOT_LINUX }, () => {
    for (const name of ['ExitAfterAnswerJs', 'ExitAfterAnswerPy']) {
      test(`${name}: 20 calls in a row all succeed`, {
        skip: name.endsWith('Py') && NO_PYTHON,
      }, async (t) => {
        const watch = watchRow(t)
        const failed: string[] = []
        for (let i = 0; i < 20; i++) {
          const call = await invoke(server.url, name, {}, 10_000)
          if (call.status !== 200) failed.push(`call ${i + 1}: ${call.status} ${call.body.message}`)
        }
        assert.deepEqual(failed, [])
        await assertNothingLeft(watch, process.pid, Object.values(FOLDERS))
      })
    }
  })

  for (const { name, skip } of bothLanguages('StderrFlood')) {
    test(`${name}: 50 MB of stderr leaves the call alone and the log bounded`, {
      skip: NOT_LINUX || skip,
    }, async (t) => {
      const watch = watchRow(t)
      const before = logged
      const call = await invoke(server.url, name, { mode: 'flood' }, 30_000)
      assert.equal(call.status, 200, JSON.stringify(call.body))
      assert.equal(call.body.result?.ok, true)
      // What the service still reads of the flood is logged after the answer: wait until the log is quiet.
      let last = -1
      await until(
        async () => {
          const now = logged
          if (now === last) return true
          last = now
          await sleep(300)
          return false
        },
        30_000,
        'the log went quiet',
        0,
      )
      const grew = logged - before
      assert.ok(grew < 5 * MB, `the log grew by ${(grew / MB).toFixed(1)} MB for 50 MB of stderr`)
      await assertGoodCall(name)
      await assertNothingLeft(watch, process.pid, Object.values(FOLDERS))
    })
  }

  test('MemoryHogPy: 1 GB past memoryMb 128 fails saying so', { skip: NOT_LINUX || NO_PYTHON }, async (t) => {
    const watch = watchRow(t)
    assertFailed(await invoke(server.url, 'MemoryHogPy', {}, 20_000), 'MemoryHogPy', /memory/)
    await assertGoodCall('MemoryHogPy')
    await assertNothingLeft(watch, process.pid, Object.values(FOLDERS))
  })
})

// The coalescing of a run's progress on its own thread (progress.ts), with real timers.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  PROGRESS_SEND_INTERVAL_MS,
  ProgressThrottle,
  type ProgressUpdate,
} from '../../src/execution/progress.js'

test('an update held within the interval is sent when the interval ends, though the run makes no more calls', async () => {
  const sent: ProgressUpdate[] = []
  const throttle = new ProgressThrottle((update) => sent.push(update))
  throttle.report(0.25, 'a')
  throttle.report(0.5, 'b')
  assert.deepEqual(sent, [[0.25, 'a']])
  await sleep(PROGRESS_SEND_INTERVAL_MS * 3)
  assert.deepEqual(sent, [
    [0.25, 'a'],
    [0.5, 'b'],
  ])
  // Past the interval an update goes at once, and the end has nothing left to send.
  throttle.report(0.75, 'c')
  throttle.end()
  throttle.report(1, 'after the end')
  assert.deepEqual(sent.at(-1), [0.75, 'c'])
  assert.equal(sent.length, 3)
})

test('a stream of calls sends at most one update per interval, and the last one at the end', () => {
  const sent: ProgressUpdate[] = []
  const throttle = new ProgressThrottle((update) => sent.push(update))
  const start = performance.now()
  let i = 0
  while (performance.now() - start < PROGRESS_SEND_INTERVAL_MS * 6) throttle.report(++i / 1e9)
  throttle.end()
  const elapsed = performance.now() - start
  assert.ok(sent.length >= 2 && sent.length <= elapsed / PROGRESS_SEND_INTERVAL_MS + 2, `${sent.length} sent`)
  assert.deepEqual(sent.at(-1), [i / 1e9, null])
})

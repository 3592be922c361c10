// The job store's progress throttle: what reaches the store of what a run reports.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { JobProgress } from '../../src/jobs/job.js'
import {
  MAX_PROGRESS_MESSAGE,
  PROGRESS_WRITE_INTERVAL_MS,
  throttledProgress,
} from '../../src/jobs/progress.js'

test('the first report is written at once, the latest of an interval after it, the same one never twice', async () => {
  const written: JobProgress[] = []
  const writer = throttledProgress(
    (update) => void written.push(update),
    (error) => assert.fail(String(error)),
  )
  writer.report(0.1, 'first')
  await sleep(0)
  assert.deepEqual(written, [{ fraction: 0.1, message: 'first', seq: 1 }])
  writer.report(0.2, 'replaced')
  writer.report(0.3, 'latest')
  await sleep(PROGRESS_WRITE_INTERVAL_MS + 50)
  assert.deepEqual(written.at(-1), { fraction: 0.3, message: 'latest', seq: 2 })
  writer.report(0.3, 'latest')
  await sleep(PROGRESS_WRITE_INTERVAL_MS + 50)
  assert.equal(written.length, 2, 'the same fraction and message are not written again')
  await writer.stop()
})

test('fractions are clamped, a non-finite one ignored, a message cut to its limit, a non-string one dropped', async () => {
  const written: JobProgress[] = []
  const writer = throttledProgress(
    (update) => void written.push(update),
    (error) => assert.fail(String(error)),
  )
  writer.report(Number.NaN, 'ignored')
  writer.report(Number.POSITIVE_INFINITY)
  await sleep(0)
  assert.deepEqual(written, [])
  writer.report(7, 'x'.repeat(MAX_PROGRESS_MESSAGE + 10))
  await sleep(0)
  assert.deepEqual(written, [{ fraction: 1, message: 'x'.repeat(MAX_PROGRESS_MESSAGE), seq: 1 }])
  writer.report(-1, 42 as unknown as string)
  await sleep(PROGRESS_WRITE_INTERVAL_MS + 50)
  assert.deepEqual(written.at(-1), { fraction: 0, message: null, seq: 2 })
  await writer.stop()
})

test('a stop drops the update waiting for its turn and waits for the write under way; a failed write is told, not thrown', async () => {
  const written: JobProgress[] = []
  const errors: unknown[] = []
  let slow: Promise<void> = Promise.resolve()
  const writer = throttledProgress(
    (update) => {
      if (update.message === 'fails') throw new Error('store away')
      slow = sleep(100).then(() => void written.push(update))
      return slow
    },
    (error) => errors.push(error),
  )
  writer.report(0.1, 'fails')
  await sleep(0)
  assert.equal(errors.length, 1)
  await sleep(PROGRESS_WRITE_INTERVAL_MS + 10)
  writer.report(0.5, 'slow')
  writer.report(0.6, 'waits')
  await writer.stop()
  assert.deepEqual(
    written.map((update) => update.message),
    ['slow'],
    'the write under way ended before the stop; the one waiting never came',
  )
  await sleep(PROGRESS_WRITE_INTERVAL_MS + 50)
  assert.deepEqual(
    written.map((update) => update.message),
    ['slow'],
  )
})

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { serialize } from 'node:v8'
import { Batcher, type JobBatch, type JobMessage } from '../../../src/jobs/remote/batch.js'

// What the cluster's IPC channel does to a message with its advanced serialisation: v8.serialize, which
// throws for a value that cannot cross (a function).
const channel = () => {
  const batches: JobBatch[] = []
  const unsendable: JobMessage[] = []
  const batcher = new Batcher(
    (batch) => {
      serialize(batch)
      batches.push(batch)
    },
    (message) => unsendable.push(message),
  )
  return { batcher, batches, unsendable }
}
const answer = (id: number, value: unknown): JobMessage => ({ type: 'algoserve:jobs-answer', id, value })

test("a turn's messages go as one batch, in order; the next turn's as another", async () => {
  const { batcher, batches } = channel()
  batcher.push(answer(1, 'a'))
  batcher.push({ type: 'algoserve:job-event', event: 'ended', id: 'j1' })
  batcher.push(answer(2, 'b'))
  assert.equal(batches.length, 0, 'nothing is sent before the turn ends')
  await nextTurn()
  assert.deepEqual(
    batches.map((batch) => batch.messages),
    [[answer(1, 'a'), { type: 'algoserve:job-event', event: 'ended', id: 'j1' }, answer(2, 'b')]],
  )
  batcher.push(answer(3, 'c'))
  await nextTurn()
  assert.deepEqual(
    batches.map((batch) => batch.messages.length),
    [3, 1],
  )
  await nextTurn()
  assert.equal(batches.length, 2, 'an empty turn sends nothing')
})

test('a message that cannot cross costs only itself: the others of its batch are sent', async () => {
  const { batcher, batches, unsendable } = channel()
  batcher.push(answer(1, 'a'))
  batcher.push(answer(2, () => 'a function'))
  batcher.push(answer(3, 'c'))
  await nextTurn()
  assert.deepEqual(
    batches.map((batch) => batch.messages),
    [[answer(1, 'a')], [answer(3, 'c')]],
  )
  assert.deepEqual(
    unsendable.map((message) => message.type === 'algoserve:jobs-answer' && message.id),
    [2],
  )
})

test('flush sends at once; discard drops what was not sent', async () => {
  const { batcher, batches } = channel()
  batcher.push(answer(1, 'a'))
  batcher.flush()
  assert.equal(batches.length, 1)
  batcher.push(answer(2, 'b'))
  batcher.discard()
  await nextTurn()
  assert.equal(batches.length, 1)
})

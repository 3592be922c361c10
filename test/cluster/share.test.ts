import assert from 'node:assert/strict'
import { test } from 'node:test'
import { shareOf, threadsOfOne } from '../../src/cluster/share.js'
import { threadsFor, usableCpus } from '../../src/execution/usable-cpus.js'

test("each HTTP process's share is the whole divided, rounded down, at least one", () => {
  assert.equal(shareOf(4, 1), 4)
  assert.equal(shareOf(4, 2), 2)
  assert.equal(shareOf(5, 2), 2)
  assert.equal(shareOf(1, 2), 1)
  assert.equal(shareOf(3, 8), 1)
})

test('worker threads: the setting divided, or its default (one per usable CPU but one) divided', () => {
  assert.equal(threadsOfOne(8, 4), 2)
  assert.equal(threadsOfOne(0, 2), shareOf(threadsFor(usableCpus().cpus), 2))
})

// Job ids: 12 lowercase hex characters, never all decimal digits without a leading zero (BullMQ reads
// such an id as an integer, and refuses it).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { newJobId } from '../../src/jobs/job-view.js'

test('newJobId: 12 lowercase hex characters, never all digits without a leading zero, no repeats', () => {
  // About 1 draw in 310 is all digits, so 100,000 draws meet some 320 of them if the rule were gone.
  const ids = new Set<string>()
  for (let i = 0; i < 100_000; i++) {
    const id = newJobId()
    assert.match(id, /^[0-9a-f]{12}$/)
    assert.doesNotMatch(id, /^[1-9][0-9]{11}$/, `${id} reads as an integer`)
    ids.add(id)
  }
  assert.equal(ids.size, 100_000)
})

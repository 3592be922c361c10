// The contract's times as JSON text.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isoTime } from '../../src/jobs/json-text.js'

test('isoTime: UTC with milliseconds and an explicit +00:00 offset', () => {
  assert.equal(isoTime(Date.UTC(2026, 10, 23, 19, 5, 7, 9)), '2026-11-23T19:05:07.009+00:00')
})

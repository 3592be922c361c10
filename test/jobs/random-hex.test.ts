import assert from 'node:assert/strict'
import { test } from 'node:test'
import { randomHex } from '../../src/jobs/random-hex.js'

test('random hex: the length asked for, lowercase hex, never the same text twice across pool refills', () => {
  const seen = new Set<string>()
  // 12 bytes a draw: 2,000 draws use the 1,536-byte pool about 16 times over.
  for (let i = 0; i < 2000; i++) {
    const hex = randomHex(i % 2 === 0 ? 12 : 6)
    assert.match(hex, i % 2 === 0 ? /^[0-9a-f]{24}$/ : /^[0-9a-f]{12}$/)
    assert.ok(!seen.has(hex), `drawn twice: ${hex}`)
    seen.add(hex)
  }
  // Every hex digit turns up in every position of the 24-character draws.
  const long = [...seen].filter((hex) => hex.length === 24)
  for (let position = 0; position < 24; position++) {
    assert.equal(new Set(long.map((hex) => hex[position])).size, 16, `position ${position}`)
  }
})

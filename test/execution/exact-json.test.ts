// The output thread's parser: the engine's JSON.parse, with integers past a double as BigInts, exactly
// where lossless-json's parse (the main thread's, for short lines) makes them.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isInteger, isSafeNumber, parse } from 'lossless-json'
import { parseExact, stringifyExact } from '../../src/execution/exact-json.js'

const lossless = (text: string) =>
  parse(text, null, (literal) =>
    isInteger(literal) && !isSafeNumber(literal) ? BigInt(literal) : Number(literal),
  )

test('integers past a double are BigInts, in and out of arrays; digits inside strings stay text', () => {
  const text =
    '{"a":[18446744073709551617,-18446744073709551617,1,1.5,9007199254740991,9007199254740993,' +
    '"18446744073709551617","x\\"18446744073709551617\\\\",{"n":123456789012345678901234567890}],' +
    '"c":12345678901234567890.5,"d":-0,"e":1e21}'
  const { value, hasBigInts } = parseExact(text)
  assert.equal(hasBigInts, true)
  assert.deepEqual(value, lossless(text))
  assert.equal((value as { a: unknown[] }).a[5], 9007199254740993n)
})

test('a string holding the marker cannot be taken for an integer', () => {
  const text = '["\\u0000exact-integer:5", 18446744073709551617, "exact-integer"]'
  assert.deepEqual(parseExact(text).value, ['\u0000exact-integer:5', 18446744073709551617n, 'exact-integer'])
})

test('without such integers it is JSON.parse; what is not JSON throws', () => {
  assert.deepEqual(parseExact('{"a":[1,2.5,"x"]}'), { value: { a: [1, 2.5, 'x'] }, hasBigInts: false })
  assert.throws(() => parseExact('{"a": 18446744073709551617'))
  assert.throws(() => parseExact('{"a": "unterminated'))
})

test('writing: a BigInt keeps its digits, known or met; the rest is the engine writer’s text', () => {
  const value = { n: 18446744073709551617n, list: [1, 'x', null], nested: { m: -5n } }
  const expected = '{"n":18446744073709551617,"list":[1,"x",null],"nested":{"m":-5}}'
  assert.equal(stringifyExact(value), expected)
  assert.equal(stringifyExact(value, true), expected)
  assert.equal(stringifyExact({ a: [1.5, 'é'] }), JSON.stringify({ a: [1.5, 'é'] }))
  assert.equal(stringifyExact(undefined), undefined)
  // Parsed and written back, a big integer is the same text.
  const text = '{"big":123456789012345678901234567890,"small":7}'
  const parsed = parseExact(text)
  assert.equal(stringifyExact(parsed.value, parsed.hasBigInts), text)
  const cycle: Record<string, unknown> = {}
  cycle.self = cycle
  assert.throws(() => stringifyExact(cycle), TypeError)
})

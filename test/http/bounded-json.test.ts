// The bounded JSON parser: JSON's grammar, numbers kept as text, Python's messages and offsets, and
// the depth, value and string length limits met before the work is spent.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { isLosslessNumber } from 'lossless-json'
import {
  JsonRefusal,
  parseBoundedJson,
  parseBoundedJsonInSlices,
  TOO_DEEP,
  TOO_LONG_STRING,
  TOO_MANY_VALUES,
} from '../../src/http/bounded-json.js'

const LIMITS = { maxDepth: 32, maxValues: 10_000, maxStringLength: 1_048_576 }
const parse = (text: string, limits = LIMITS) => parseBoundedJson(text, limits)

function refusal(text: string, limits = LIMITS): { message: string; position: number } {
  try {
    parse(text, limits)
  } catch (error) {
    assert.ok(error instanceof JsonRefusal, `a JsonRefusal for ${text.slice(0, 40)}, not ${error}`)
    return { message: error.message, position: error.position }
  }
  assert.fail(`${text.slice(0, 40)} was accepted`)
}

test('reads what JSON.parse reads, numbers kept as their text', () => {
  const texts = [
    '{"a": [1, -2.5e3, true, false, null, "x\\n\\u00e9"], "b": {"c": {}}, "d": []}',
    ' [ ] ',
    '"\\ud83d\\ude00"',
    '0',
    '-1.0E+12',
    '{"k": 1, "k": 2}',
  ]
  for (const text of texts) {
    const plain = JSON.parse(
      JSON.stringify(parse(text), (_k, v) => (isLosslessNumber(v) ? Number(v.value) : v)),
    )
    assert.deepEqual(plain, JSON.parse(text), text)
  }
  const big = parse('{"number": 123456789012345678901234567890}') as { number: { value: string } }
  assert.equal(big.number.value, '123456789012345678901234567890')
})

test('"__proto__" is a member like any other', () => {
  const value = parse('{"__proto__": {"number": 7}}') as Record<string, unknown>
  assert.equal(Object.getPrototypeOf(value), Object.prototype)
  assert.deepEqual(Object.keys(value), ['__proto__'])
  assert.equal((value as { number?: unknown }).number, undefined)
})

test("syntax errors carry Python's message and offset", () => {
  const cases: [string, string, number][] = [
    ['{"number": tru}', 'Expecting value', 11],
    ['{"number": 7', "Expecting ',' delimiter", 12],
    ['{"number" 7}', "Expecting ':' delimiter", 10],
    ['{number: 7}', 'Expecting property name enclosed in double quotes', 1],
    ['{"a": 1,}', 'Expecting property name enclosed in double quotes', 8],
    ['[1, 2] x', 'Extra data', 7],
    ['"abc', 'Unterminated string starting at', 0],
    ['"a\u0001"', 'Invalid control character at', 2],
    ['"a\\x"', 'Invalid \\escape', 2],
    ['-', 'Expecting value', 0],
    ['1.', 'Expecting value', 0],
    ['NaN', 'Expecting value', 0],
    ['\uFEFF{}', 'Expecting value', 0],
  ]
  for (const [text, message, position] of cases) {
    assert.deepEqual(refusal(text), { message, position }, text)
  }
})

test('nesting past the depth limit is refused where it passes it, with no recursion', () => {
  assert.deepEqual(parse(`${'['.repeat(32)}${']'.repeat(32)}`), parse(`${'['.repeat(32)}${']'.repeat(32)}`))
  assert.deepEqual(refusal(`${'['.repeat(33)}${']'.repeat(33)}`), { message: TOO_DEEP, position: 32 })
  // Far deeper than any stack: refused at the same place.
  assert.deepEqual(refusal('{"a":'.repeat(1_000_000)), { message: TOO_DEEP, position: 5 * 32 })
  assert.deepEqual(refusal('['.repeat(1_000_000), { ...LIMITS, maxDepth: 100_000, maxValues: 10_000_000 }), {
    message: TOO_DEEP,
    position: 100_000,
  })
})

test('more values than the limit are refused as soon as counted', () => {
  const items = (n: number) => `[${Array(n).fill('[]').join(',')}]`
  assert.equal((parse(items(9_999)) as unknown[]).length, 9_999)
  const { message, position } = refusal(items(400_000))
  assert.equal(message, TOO_MANY_VALUES)
  assert.equal(position, 1 + 3 * 9_999, 'refused at the value after the limit, not at the end')
})

test('a string longer than the limit, key or value, is refused at its opening quote', () => {
  const limits = { ...LIMITS, maxStringLength: 6 }
  // The text between the quotes as written: an escape counts as its characters, not as what it decodes to.
  assert.deepEqual(parse('{"abcdef": ["123456", "\\u00e9"]}', limits), { abcdef: ['123456', '\u00e9'] })
  assert.deepEqual(refusal('["123456", "1234567"]', limits), { message: TOO_LONG_STRING, position: 11 })
  assert.deepEqual(refusal('{"a": 1, "abcdefg": 2}', limits), { message: TOO_LONG_STRING, position: 9 })
  assert.deepEqual(refusal('["\\n\\n\\nx"]', limits), { message: TOO_LONG_STRING, position: 1 })
  // Unterminated, and longer than the limit: too long, whatever follows.
  assert.deepEqual(refusal(`["${'x'.repeat(1000)}`, limits), { message: TOO_LONG_STRING, position: 1 })
  assert.deepEqual(refusal('["xy', limits), { message: 'Unterminated string starting at', position: 1 })
})

test('the stats hold the longest string, key or value', () => {
  const stats = { values: 0, depth: 0, longestString: 0 }
  parseBoundedJson('{"abcdefg": ["ab", "a\\nb"], "c": ""}', LIMITS, stats)
  assert.deepEqual(stats, { values: 5, depth: 2, longestString: 7 })
})

/** The outcome of a parse as data: the value with numbers as their text, or the refusal. */
async function outcome(parse: () => unknown): Promise<unknown> {
  try {
    const value = await parse()
    return { value: JSON.stringify(value, (_k, v) => (isLosslessNumber(v) ? `#${v.value}` : v)) }
  } catch (error) {
    assert.ok(error instanceof JsonRefusal)
    return { refused: error.message, at: error.position }
  }
}

test('in slices: the same value or the same refusal as at once, wherever the slices end', async () => {
  const json = fc.json({ depthSize: 'medium' })
  // Good texts, and texts broken at a random place (cut short, or a character changed).
  const text = fc.oneof(
    json,
    fc.tuple(json, fc.nat(), fc.constantFrom('', ']', '}', ',', '"', 'x', '\\')).map(([t, at, c]) => {
      const cut = at % (t.length + 1)
      return t.slice(0, cut) + c + t.slice(cut + 1)
    }),
  )
  const limits = { maxDepth: 6, maxValues: 200, maxStringLength: 8 }
  await fc.assert(
    fc.asyncProperty(text, fc.integer({ min: 1, max: 12 }), async (t, slice) => {
      assert.deepEqual(
        await outcome(() => parseBoundedJsonInSlices(t, limits, slice)),
        await outcome(() => parseBoundedJson(t, limits)),
      )
    }),
    { numRuns: 500 },
  )
})

test('in slices: a large body is parsed over many turns of the event loop, others running between', async () => {
  const text = `[${Array(100_000).fill('[]').join(',')}]`
  let turns = 0
  const counting = setInterval(() => turns++, 0)
  try {
    const value = (await parseBoundedJsonInSlices(
      text,
      { maxDepth: 4, maxValues: 200_000, maxStringLength: 16 },
      16_384,
    )) as unknown[]
    assert.equal(value.length, 100_000)
  } finally {
    clearInterval(counting)
  }
  // 300,000 characters in slices of 16,384: 18 slices, so some timers ran between them.
  assert.ok(turns >= 3, `${turns} timer callbacks ran during the parse`)
})

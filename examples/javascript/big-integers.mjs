// Sending and reading integers above 2^53 exactly from JavaScript (docs/api.md, "JavaScript clients").
// JSON.parse reads every number as a double, so 18446744073709551617 becomes 18446744073709552000.
//
//   node examples/javascript/big-integers.mjs http://127.0.0.1:8000
//
// test/examples/big-integers.test.ts runs it against a live service.
import assert from 'node:assert/strict'
import { parse, parseNumberAndBigInt, stringify } from 'lossless-json'

const base = process.argv[2] ?? 'http://127.0.0.1:8000'
const number = 18446744073709551617n // 2^64 + 1, well above Number.MAX_SAFE_INTEGER

async function invoke(body) {
  const response = await fetch(`${base}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
  assert.equal(response.status, 200)
  return response.text()
}

/** Every factor times the others gives the number back, in exact arithmetic. */
function check(how, result) {
  assert.equal(typeof result.number, 'bigint')
  assert.equal(result.number, number)
  const product = result.factors.reduce((a, b) => BigInt(a) * BigInt(b), 1n)
  assert.equal(product, number)
  console.log(`${how}: number ${result.number}, factors ${result.factors.join(' x ')}, product exact`)
}

// 1. lossless-json (any Node version, any browser): BigInt out, BigInt in where a double would round.
{
  const text = await invoke(stringify({ number }))
  const { result } = parse(text, null, parseNumberAndBigInt)
  check('lossless-json', result)
}

// 2. A string of digits is accepted as the number too, so plain JSON.stringify can send one.
{
  const text = await invoke(JSON.stringify({ number: number.toString() }))
  const { result } = parse(text, null, parseNumberAndBigInt)
  check('digits as a string', result)
}

// 3. Built in (Node 21+, Chrome 114+, Firefox 135+, Safari 18.4+): JSON.rawJSON writes the digits as a
//    number, and JSON.parse's third reviver argument gives the source text of each value.
if (typeof JSON.rawJSON === 'function') {
  const text = await invoke(JSON.stringify({ number: JSON.rawJSON(number.toString()) }))
  const { result } = JSON.parse(text, (_key, value, context) =>
    Number.isInteger(value) && !Number.isSafeInteger(value) ? BigInt(context.source) : value,
  )
  check('JSON.rawJSON and the reviver source', result)
} else {
  console.log(`built in: JSON.rawJSON is not in Node ${process.version} (Node 21+); skipped`)
}

// The JSON-lines protocol of process algorithms, line by line: requests with exact integers, messages
// read and judged, and the cutting of a stream into bounded lines.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LineReader, ProtocolError, readMessage, requestLine } from '../../src/execution/process-protocol.js'

test('a request is one line: id, params, timeout_ms; a BigInt is written as its digits', () => {
  assert.equal(
    requestLine('1', { a: 1, s: 'x' }, 500),
    '{"id":"1","params":{"a":1,"s":"x"},"timeout_ms":500}\n',
  )
  assert.equal(
    requestLine('2', { n: 123456789012345678901234567890n, list: [1n, 2.5] }, null),
    '{"id":"2","params":{"n":123456789012345678901234567890,"list":[1,2.5]},"timeout_ms":null}\n',
  )
})

test('messages: a result (integers past a double as BigInt), an error, progress clamped to [0, 1]', () => {
  assert.deepEqual(readMessage('{"id":"1","result":{"n":18446744073709551617,"small":3,"x":0.5}}'), {
    id: '1',
    kind: 'result',
    result: { n: 18446744073709551617n, small: 3, x: 0.5 },
  })
  assert.deepEqual(readMessage('{"id":"1","error":"no"}'), { id: '1', kind: 'error', error: 'no' })
  assert.deepEqual(
    readMessage('{"id":"1","error":{"type":"invalid_params","message":"n must be even","field":"n"}}'),
    { id: '1', kind: 'error', error: 'n must be even', invalidParams: { field: 'n' } },
  )
  for (const none of ['', ',"field":null']) {
    assert.deepEqual(readMessage(`{"id":"1","error":{"type":"invalid_params","message":"no"${none}}}`), {
      id: '1',
      kind: 'error',
      error: 'no',
      invalidParams: { field: undefined },
    })
  }
  assert.deepEqual(readMessage('{"id":"1","progress":0.5,"message":"half"}'), {
    id: '1',
    kind: 'progress',
    fraction: 0.5,
    message: 'half',
  })
  assert.equal((readMessage('{"id":"1","progress":-3}') as { fraction: number }).fraction, 0)
  assert.equal((readMessage('{"id":"1","result":null}') as { result: unknown }).result, null)
})

for (const [line, problem] of [
  ['not json', /not JSON/],
  ['[1]', /not a JSON object/],
  ['{"result":1}', /without a string 'id'/],
  ['{"id":1,"result":1}', /without a string 'id'/],
  ['{"id":"1","error":5}', /'error' that is neither a string nor an object/],
  ['{"id":"1","error":["no"]}', /'error' that is neither a string nor an object/],
  ['{"id":"1","error":{"x":1}}', /'error' object whose 'type' is not 'invalid_params'/],
  ['{"id":"1","error":{"type":"invalid_params"}}', /'invalid_params' error without a string 'message'/],
  ['{"id":"1","error":{"type":"invalid_params","message":"no","field":1}}', /whose 'field' is not a string/],
  ['{"id":"1","progress":"half"}', /'progress' that is not a number/],
  ['{"id":"1","progress":0.5,"message":5}', /progress 'message' that is not a string/],
  ['{"id":"1"}', /none of 'result', 'error' or 'progress'/],
] as const) {
  test(`a line that breaks the protocol: ${line}`, () => {
    assert.throws(
      () => readMessage(line),
      (error: unknown) => error instanceof ProtocolError && problem.test(error.message),
    )
  })
}

test('lines cut across chunks, and a line past the bound handed over cut, the rest of it dropped', () => {
  const lines: string[] = []
  const overflows: string[] = []
  const reader = new LineReader(
    8,
    (line) => lines.push(line),
    (start) => overflows.push(start),
  )
  reader.push(Buffer.from('ab\ncd'))
  reader.push(Buffer.from('ef\n'))
  reader.push(Buffer.from('0123456789'))
  reader.push(Buffer.from('more of it\nnext\n'))
  reader.push(Buffer.from('é'.repeat(2)))
  reader.push(Buffer.from('\n'))
  assert.deepEqual(lines, ['ab', 'cdef', 'next', 'éé'])
  assert.deepEqual(overflows, ['01234567'])
})

test('a traced call carries its trace context on the request line; an untraced one has no trace member', () => {
  const trace = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'a=1' }
  assert.deepEqual(JSON.parse(requestLine('3', { n: 1 }, 1000, trace)), {
    id: '3',
    params: { n: 1 },
    timeout_ms: 1000,
    trace,
  })
  assert.equal('trace' in JSON.parse(requestLine('4', { n: 1 }, null)), false)
})

// `algoserve algorithms`, `algoserve call <algorithm>` and `algoserve jobs create|list` with algorithms
// of one's own (the example modules), in a child process against a real service: readable output and
// --json, params from --params and key=value with every digit, the service's 422 and 404 as exit 1.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parse } from 'lossless-json'
import { startApp, type TestApp } from '../helpers/app.js'
import { cli } from '../helpers/cli.js'

const EXAMPLES = fileURLToPath(new URL('../../examples/algorithms', import.meta.url))
const BIG = '18446744073709551617'

let server: TestApp
before(async () => {
  server = await startApp({ algorithms: [EXAMPLES] })
})
after(() => server.close())

test('algorithms: a table of every algorithm; one: its schemas and its examples as commands that run', async () => {
  const list = await cli(['algorithms', '--url', server.url])
  assert.equal(list.code, 0, list.stderr)
  const lines = list.stdout.trimEnd().split('\n')
  assert.match(lines[0] ?? '', /^NAME +VERSION +WORKERS +DESCRIPTION$/)
  assert.deepEqual(
    lines.slice(1).map((line) => line.split(/ +/)[0]),
    ['Collatz', 'Echo', 'Fibonacci', 'PrimeChecker', 'SlowCount'],
  )
  assert.match(list.stdout, /^Collatz +1\.0\.0 +1 +Steps of the Collatz sequence/m)

  const one = await cli(['algorithms', 'Collatz', '--url', server.url])
  assert.equal(one.code, 0, one.stderr)
  assert.match(one.stdout, /^time limit +5000 ms$/m)
  assert.match(one.stdout, /"minimum": 1/)
  const example = /^ {2}algoserve (call Collatz --params '(\{.*\})')$/m.exec(one.stdout)
  assert.ok(example, one.stdout)
  const run = await cli(['call', 'Collatz', '--params', example[2] as string, '--url', server.url])
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stdout, /^result\.steps +111$/m)

  const unknown = await cli(['algorithms', 'Nope', '--url', server.url])
  assert.equal(unknown.code, 1)
  assert.match(unknown.stderr, /^algoserve: 404 ALGORITHM_NOT_FOUND: /)
})

test('call <algorithm> with key=value or --params: member by member, every digit; --json as sent', async () => {
  const run = await cli(['call', 'Collatz', 'n=27', '--url', server.url])
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stdout, /^algorithm +Collatz 1\.0\.0$/m)
  assert.match(run.stdout, /^result\.steps +111$/m)
  assert.match(run.stdout, /^result\.peak +9232$/m)
  assert.match(run.stdout, /^elapsed +[0-9.]+ (ms|s)$/m)

  const json = await cli(['call', 'Collatz', '--params', `{"n": ${BIG}}`, '--json', '--url', server.url])
  assert.equal(json.code, 0, json.stderr)
  const direct = await fetch(`${server.url}/algorithms/Collatz/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"n": ${BIG}}`,
  })
  const body = parse(json.stdout) as { result: Record<string, unknown> }
  const expected = parse(await direct.text()) as { result: Record<string, unknown> }
  assert.equal(String(body.result.peak), String(expected.result.peak))
  assert.ok(BigInt(String(body.result.peak)) > 2n ** 64n, 'a peak past 2^64, exact')

  // PrimeChecker by name, through its own invoke route: still in words.
  const prime = await cli(['call', 'PrimeChecker', 'number=97', '--url', server.url])
  assert.equal(prime.code, 0, prime.stderr)
  assert.match(prime.stdout, /^number +97 is prime$/m)
})

test("the service's judgement of params and names: exit 1 with its 422 or 404", async () => {
  const bad = await cli(['call', 'Collatz', '--params', '{"n": 0}', '--url', server.url])
  assert.equal(bad.code, 1)
  assert.match(bad.stderr, /^algoserve: 422 body\.n: /)
  const queued = await cli(['jobs', 'create', 'Collatz', 'n="x"', '--url', server.url])
  assert.equal(queued.code, 1)
  assert.match(queued.stderr, /^algoserve: 422 body\.params\.n: /)
  const unknown = await cli(['call', 'Nope', 'n=1', '--url', server.url])
  assert.equal(unknown.code, 1)
  assert.match(unknown.stderr, /^algoserve: 404 ALGORITHM_NOT_FOUND: /)
})

test('jobs create <algorithm>, wait, and list --algorithm', async () => {
  const created = await cli(['jobs', 'create', 'SlowCount', 'to=2', 'step_ms=10', '--url', server.url])
  assert.equal(created.code, 0, created.stderr)
  const id = /^job +([0-9a-f]{12})$/m.exec(created.stdout)?.[1]
  assert.ok(id, created.stdout)
  const waited = await cli(['jobs', 'wait', id, '--timeout', '20', '--url', server.url])
  assert.equal(waited.code, 0, waited.stderr)
  assert.match(waited.stdout, /^algorithm +SlowCount$/m)
  assert.match(waited.stdout, /^result\.counted +2$/m)
  assert.match(waited.stdout, /^result\.complete +true$/m)

  const other = await cli(['jobs', 'create', '97', '--url', server.url])
  assert.equal(other.code, 0, other.stderr)
  const list = await cli(['jobs', 'list', '--algorithm', 'SlowCount', '--url', server.url])
  assert.equal(list.code, 0, list.stderr)
  const rows = list.stdout.trimEnd().split('\n').slice(1)
  assert.deepEqual(
    rows.map((row) => row.split(/ +/).slice(0, 3)),
    [[id, 'completed', 'SlowCount']],
  )
  assert.match(rows[0] ?? '', / counted: 2, complete: true$/)
})

// The client's command line read into commands: an algorithm's params from --params and key=value pairs,
// numbers kept with every digit, and the PrimeChecker shorthand (`call 97`) as it was.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { stringify } from 'lossless-json'
import { type ClientOptions, HELP, parseClientArgs, UsageError } from '../../src/client/args.js'

const read = (...argv: string[]) => {
  const options = parseClientArgs(argv, {})
  assert.notEqual(options, HELP)
  return (options as ClientOptions).command
}
/** The params of a `call <algorithm> ...` as the JSON text sent. */
const sent = (...argv: string[]) => {
  const command = read('call', ...argv)
  assert.ok(command.name === 'call' && command.work.algorithm !== null, JSON.stringify(command))
  return { algorithm: command.work.algorithm, body: stringify(command.work.params) }
}

describe('call and jobs create', () => {
  test('a lone integer is PrimeChecker, as before: leading zeros and + dropped', () => {
    assert.deepEqual(read('call', '+0097'), { name: 'call', work: { algorithm: null, number: '97' } })
    const create = read('jobs', 'create', '-12', '--webhook', 'https://example.com/h')
    assert.deepEqual(create, {
      name: 'create',
      work: { algorithm: null, number: '-12' },
      webhook: 'https://example.com/h',
      idempotencyKey: null,
    })
  })

  test('--params: a JSON object, its numbers with every digit', () => {
    assert.deepEqual(sent('Collatz', '--params', '{"n": 18446744073709551617}'), {
      algorithm: 'Collatz',
      body: '{"n":18446744073709551617}',
    })
    assert.equal(sent('Collatz', '--params={"n":1e400}').body, '{"n":1e400}')
  })

  test('key=value: JSON when it reads as JSON, else the text; pairs set keys over --params', () => {
    assert.equal(
      sent('WordCount', 'text=the cat', 'top=2', 'exact=123456789012345678901234567890').body,
      '{"text":"the cat","top":2,"exact":123456789012345678901234567890}',
    )
    assert.equal(
      sent('X', 'ok=true', 'none=null', 's="42"', 'list=[1,"a"]', 'o={"k":1}', 'eq=a=b', 'empty=').body,
      '{"ok":true,"none":null,"s":"42","list":[1,"a"],"o":{"k":1},"eq":"a=b","empty":""}',
    )
    assert.equal(
      sent('SlowCount', '--params', '{"to": 3, "step_ms": 5}', 'to=4').body,
      '{"to":4,"step_ms":5}',
    )
    // A name alone: no params, an empty object.
    assert.equal(sent('PrimeChecker').body, '{}')
    // An integer-looking name is an algorithm once params are given.
    assert.equal(sent('42', 'n=1').algorithm, '42')
  })

  test('jobs create <algorithm> keeps its webhook and idempotency key', () => {
    const command = read('jobs', 'create', 'Collatz', 'n=27', '--idempotency-key', 'k-1')
    assert.ok(command.name === 'create')
    assert.equal(command.work.algorithm, 'Collatz')
    assert.equal(command.idempotencyKey, 'k-1')
    assert.equal(command.webhook, null)
  })

  test('usage errors name the problem', () => {
    const cases: [string[], RegExp][] = [
      [['call'], /call: missing <algorithm> \(or a number for PrimeChecker\)/],
      [['call', '1.5'], /'1\.5' is not an integer/],
      [['call', 'Coll atz'], /'Coll atz' is not an algorithm name/],
      [['call', 'Collatz', '--params', '[1]'], /--params must be a JSON object/],
      [['call', 'Collatz', '--params', '{"n":'], /--params is not JSON/],
      [['call', 'Collatz', 'n'], /'n' is not a key=value pair/],
      [['call', 'Collatz', '=1'], /'=1' is not a key=value pair/],
      [['call', 'Collatz', 'n=1', 'n=2'], /n= is given twice/],
      [['jobs', 'get', 'abc', '--params', '{}'], /get takes no --params/],
      [['algorithms', 'a', 'b'], /algorithms: unexpected argument 'b'/],
      [['algorithms', 'a/b'], /'a\/b' is not an algorithm name/],
      [['call', 'Sum@', 'a=1'], /'Sum@' is not Name@version/],
      [['jobs', 'create', 'Sum@1@2', 'a=1'], /'Sum@1@2' is not Name@version/],
      [['call', 'S/um@1.2.0'], /'S\/um' is not an algorithm name/],
    ]
    for (const [argv, message] of cases) {
      assert.throws(
        () => parseClientArgs(argv, {}),
        (error: unknown) => {
          assert.ok(error instanceof UsageError, `${argv.join(' ')}: ${String(error)}`)
          assert.match(error.message, message)
          return true
        },
      )
    }
  })
})

test('algorithms, with or without a name', () => {
  assert.deepEqual(read('algorithms'), { name: 'algorithms', algorithm: null, version: null })
  assert.deepEqual(read('algorithms', 'Collatz', '--json'), {
    name: 'algorithms',
    algorithm: 'Collatz',
    version: null,
  })
  assert.deepEqual(read('algorithms', 'Collatz@^1'), {
    name: 'algorithms',
    algorithm: 'Collatz',
    version: '^1',
  })
})

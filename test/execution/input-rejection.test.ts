// A run's refusal of its params, known by its name alone: the package's InvalidParamsError, or any error
// so named; and the value the field names in the params.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fieldValue, InputRejected, inputRejectionOf } from '../../src/execution/input-rejection.js'
import { InvalidParamsError } from '../../src/index.js'

test("the package's InvalidParamsError, and any error of that name, is a refusal with its field", () => {
  const ours = inputRejectionOf(new InvalidParamsError('n must be even', 'n'))
  assert.ok(ours instanceof InputRejected)
  assert.deepEqual([ours.message, ours.field], ['n must be even', 'n'])
  const named = Object.assign(new Error('no'), { name: 'InvalidParamsError', field: 7 })
  assert.deepEqual([inputRejectionOf(named)?.message, inputRejectionOf(named)?.field], ['no', undefined])
  assert.equal(inputRejectionOf(new Error('n must be even')), undefined)
  assert.equal(inputRejectionOf('InvalidParamsError'), undefined)
})

test('the value a field names: a dotted path of members, null when it names none', () => {
  const params = { n: 3, edges: [[0, 1]], nested: { to: 0n } }
  assert.equal(fieldValue(params, 'n'), 3)
  assert.deepEqual(fieldValue(params, 'edges.0'), [0, 1])
  assert.equal(fieldValue(params, 'nested.to'), 0n)
  assert.equal(fieldValue(params, 'missing'), null)
  assert.equal(fieldValue(params, 'n.x'), null)
  assert.equal(fieldValue(params, '__proto__'), null)
  assert.equal(fieldValue(params, undefined), null)
})

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LosslessNumber } from 'lossless-json'
import { digitCount, integerParam, readIntegerInput, toBigInt } from '../../src/algorithms/integer-input.js'
import { InputRuleError } from '../../src/errors.js'

const literal = (text: string) => new LosslessNumber(text)

test('reads JSON number literals exactly, through no double', () => {
  const cases: [string, bigint][] = [
    ['0', 0n],
    ['-0', 0n],
    ['9007199254740993', 9007199254740993n],
    ['-18446744073709551617', -18446744073709551617n],
    ['7.0', 7n],
    ['7.000', 7n],
    ['1e3', 1000n],
    ['1E+3', 1000n],
    ['1.5e1', 15n],
    ['1200e-2', 12n],
    ['0.0e5', 0n],
    ['-2.50e2', -250n],
  ]
  for (const [text, expected] of cases) {
    const read = readIntegerInput(literal(text))
    assert.notEqual(typeof read, 'string', text)
    assert.equal(toBigInt(read as Exclude<typeof read, string>), expected, text)
  }
})

test('names the pydantic problem of anything else', () => {
  const cases: [unknown, string][] = [
    [literal('1.5'), 'int_from_float'],
    [literal('1e-1'), 'int_from_float'],
    [literal('123e-2'), 'int_from_float'],
    ['12a', 'int_parsing'],
    ['', 'int_parsing'],
    [' 7', 'int_parsing'],
    ['+7', 'int_parsing'],
    ['7.0', 'int_parsing'],
    [true, 'int_type'],
    [null, 'int_type'],
    [[], 'int_type'],
    [{}, 'int_type'],
    [undefined, 'int_type'],
  ]
  for (const [value, problem] of cases) assert.equal(readIntegerInput(value), problem, JSON.stringify(value))
})

test('counts digits without converting', () => {
  const count = (value: unknown) =>
    digitCount(readIntegerInput(value) as Exclude<ReturnType<typeof readIntegerInput>, string>)
  assert.equal(count('0'), 1)
  assert.equal(count('-000123'), 3)
  assert.equal(count(literal('1e4299')), 4300)
  assert.equal(count(literal('1e999999999999')), 1e12)
  assert.equal(count(literal('12.5e1')), 3)
})

test('integerParam enforces the digit limit with a 400 naming the field', () => {
  assert.equal(integerParam('1234', 'params.number', 4), 1234n)
  assert.throws(
    () => integerParam('12345', 'params.number', 4),
    (error: unknown) =>
      error instanceof InputRuleError &&
      error.statusCode === 400 &&
      /5 digits/.test(error.message) &&
      (error.details as { field: string }).field === 'params.number',
  )
  assert.throws(() => integerParam(literal('1e5'), 'number', 4), InputRuleError)
  assert.throws(() => integerParam(false, 'number', 4), /number: Input should be a valid integer/)
})

import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkModule } from '../../src/algorithms/contract.js'
import {
  boundsOf,
  ceilingBounds,
  checkDeclaredBounds,
  howToRaise,
  largestBounds,
} from '../../src/algorithms/request-bounds.js'
import { defaultConfig } from '../../src/config.js'
import { ConfigError } from '../../src/errors.js'

const settings = defaultConfig()

const algorithm = (name: string, bounds: Record<string, number> = {}) =>
  checkModule(
    {
      name,
      version: '1.0.0',
      description: 'Counts.',
      params: { type: 'object' },
      result: { type: 'object' },
      run: () => ({}),
      ...bounds,
    },
    `${name}.mjs`,
  )

test('an algorithm that declares nothing gets the settings; what it declares replaces them one by one', () => {
  assert.deepEqual(boundsOf(algorithm('Plain'), settings), {
    maxBodyBytes: 1_048_576,
    maxJsonValues: 10_000,
    maxJsonDepth: 32,
    maxStringLength: 1_048_576,
    maxDigits: 4300,
  })
  assert.deepEqual(boundsOf(algorithm('Edges', { maxJsonValues: 25_000, maxJsonDepth: 4 }), settings), {
    maxBodyBytes: 1_048_576,
    maxJsonValues: 25_000,
    maxJsonDepth: 4,
    maxStringLength: 1_048_576,
    maxDigits: 4300,
  })
})

test('a ceiling is never below its default setting', () => {
  const ceilings = ceilingBounds({ ...settings, maxJsonValues: 5_000_000, maxJsonValuesCeiling: 1_000_000 })
  assert.equal(ceilings.maxJsonValues, 5_000_000)
  assert.equal(ceilings.maxBodyBytes, 16 * 1_048_576)
  assert.equal(ceilings.maxStringLength, 16 * 1_048_576)
})

test('a declaration up to its ceiling loads; one above it stops the start naming the bound and both values', () => {
  checkDeclaredBounds([algorithm('AtCeiling', { maxJsonValues: 1_000_000, maxDigits: 100_000 })], settings)
  assert.throws(
    () => checkDeclaredBounds([algorithm('Plain'), algorithm('Greedy', { maxDigits: 200_000 })], settings),
    (error: Error) =>
      error instanceof ConfigError &&
      error.message ===
        "Algorithm Greedy.mjs: 'maxDigits' is 200000, above the ceiling of 100000 that " +
          'ALGOSERVE_MAX_DIGITS_CEILING sets; raise ALGOSERVE_MAX_DIGITS_CEILING or declare at most 100000.',
  )
  // The operator's lower ceiling holds too.
  assert.throws(
    () =>
      checkDeclaredBounds([algorithm('Edges', { maxBodyBytes: 4096 })], {
        ...settings,
        maxBodyBytes: 1024,
        maxBodyBytesCeiling: 2048,
      }),
    /'maxBodyBytes' is 4096, above the ceiling of 2048 that ALGOSERVE_MAX_BODY_BYTES_CEILING sets/,
  )
  assert.throws(
    () => checkDeclaredBounds([algorithm('Notes', { maxStringLength: 16_777_217 })], settings),
    /'maxStringLength' is 16777217, above the ceiling of 16777216 that ALGOSERVE_MAX_STRING_LENGTH_CEILING sets/,
  )
})

test('the largest bounds are each bound largest over the algorithms and the defaults', () => {
  const algorithms = [
    algorithm('Edges', { maxJsonValues: 25_000, maxJsonDepth: 4 }),
    algorithm('Big', { maxBodyBytes: 4_000_000 }),
  ]
  assert.deepEqual(largestBounds(algorithms, settings), {
    maxBodyBytes: 4_000_000,
    maxJsonValues: 25_000,
    maxJsonDepth: 32,
    maxStringLength: 1_048_576,
    maxDigits: 4300,
  })
})

test('how to raise a bound names the contract member, its ceiling and the default setting', () => {
  assert.equal(
    howToRaise('maxJsonValues', { algorithm: 'Edges', settings }),
    "raise it with 'maxJsonValues' in Edges's contract (up to 1000000, the ceiling " +
      'ALGOSERVE_MAX_JSON_VALUES_CEILING sets), or with ALGOSERVE_MAX_JSON_VALUES for algorithms that declare none',
  )
  assert.match(howToRaise('maxBodyBytes', { settings }), /in the algorithm's contract \(up to 16777216,/)
})

import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { pino } from 'pino'
import * as errors from '../src/errors.js'

// One instance of every concrete error class the service defines.
const instances: errors.CodedError[] = [
  new errors.InputRuleError('bad', 'number', '1'),
  new errors.AlgorithmInputError('source is not a node of the graph', 'source', 'Z'),
  new errors.AlgorithmNotFoundError('Nope', ['PrimeChecker']),
  new errors.JobNotFoundError('0123456789ab'),
  new errors.JobAlreadyFinishedError('0123456789ab', 'completed'),
  new errors.IdempotencyKeyReusedError(),
  new errors.BadCursorError('nonsense'),
  new errors.PayloadTooLargeError(10),
  new errors.AlgorithmError('PrimeChecker', 'boom', new Error('boom')),
  new errors.RunTimeLimitError('PrimeChecker', 500),
  new errors.InternalError(new Error('boom')),
  new errors.ServiceUnavailableError('later'),
  new errors.UnauthorizedError(false),
  new errors.RateLimitedError(10, 60_000, 5),
  new errors.SchemaValidationError([]),
  new errors.StoreUnavailableError('down'),
  new errors.StoreFullError('full'),
  new errors.DuplicateJobIdError('0123456789ab'),
  new errors.ShutdownAbort('shutting down'),
  new errors.LockLostAbort('the lock of 0123456789ab lapsed'),
  new errors.WebhookAddressRefusedError('example.test', '10.0.0.1'),
  new errors.ProcessStateError('cannot go from busy to busy'),
  new errors.ConfigError('bad setting'),
  new errors.RedisRefusedError('evicts keys'),
  new errors.VersionChangedError('/srv/sum.mjs', 'Sum', '1.0.0', '/srv/old/sum.mjs'),
  new errors.ReloadFailedError('the list did not load.'),
  new errors.VersionNotLoadedAbort('Version 1.0.0 of the algorithm Sum is not loaded here.'),
]

test('every error class of errors.ts is covered here', () => {
  const classes = Object.values(errors).filter(
    (value): value is typeof errors.CodedError =>
      typeof value === 'function' && value.prototype instanceof errors.CodedError,
  )
  const abstract = [errors.ContractError, errors.InternalFault]
  const concrete = classes.filter((c) => !abstract.includes(c as never))
  assert.deepEqual(concrete.map((c) => c.name).sort(), instances.map((e) => e.constructor.name).sort())
})

test('every error takes its name from its class and has a stable upper-case code', () => {
  for (const error of instances) {
    assert.equal(error.name, error.constructor.name)
    assert.match(error.code, /^[A-Z][A-Z_]+$/, error.name)
  }
})

test('internal faults have codes of their own, distinct from each other', () => {
  const internal = instances.filter((e) => e instanceof errors.InternalFault).map((e) => e.code)
  assert.equal(new Set(internal).size, internal.length)
})

test("a logged internal fault carries its code in the log line's err", () => {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  const log = pino(sink)
  log.error({ err: new errors.StoreUnavailableError('down', { cause: new Error('disk') }) }, 'failed')
  const line = JSON.parse(lines[0] as string)
  assert.equal(line.err.code, 'STORE_UNAVAILABLE')
  assert.equal(line.err.type, 'StoreUnavailableError')
})

// Every log line of a request carries its request id (docs/api.md, request ids), each answered request
// gets one access line, and the stack of a failure is in the log, never in the body.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import pino from 'pino'
import { accessLine, accessSink } from '../../src/http/request-log.js'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import { postRaw, startApp, type TestApp } from '../helpers/app.js'
import { until } from '../helpers/time.js'

const MESSAGE = 'the words of the algorithm'
const modules = writeModules({
  'failing.mjs': moduleSource(validMembers('Failing', `() => { throw new TypeError('${MESSAGE}') }`)),
})

interface LogLine {
  msg: string
  request_id?: string
  status?: number
  url?: string
  err?: { stack?: string; code?: string }
}

const lines: LogLine[] = []
let server: TestApp
before(async () => {
  server = await startApp(
    { logLevel: 'info', algorithms: [modules.dir] },
    {
      logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line)) } },
    },
  )
})
after(async () => {
  await server.close()
  modules.remove()
})

/** The log lines of one request, once its access line (written after the answer is sent) is there. */
async function linesOf(requestId: string): Promise<LogLine[]> {
  const mine = () => lines.filter((line) => line.request_id === requestId)
  await until(() => mine().some((line) => line.msg === 'request completed'), 5000, 'the access line', 10)
  return mine()
}

test('a plain request logs exactly its access line, with its id, method, path and status', async () => {
  const response = await fetch(`${server.url}/healthz`)
  const id = response.headers.get('x-request-id') ?? ''
  assert.equal(response.status, 200)
  const logged = await linesOf(id)
  assert.deepEqual(
    logged.map((line) => [line.msg, line.url, line.status]),
    [['request completed', '/healthz', 200]],
    `the lines of request ${id}: ${JSON.stringify(logged)}`,
  )
})

test("a failure's stack is logged under the request's id and stays out of the body", async () => {
  const response = await postRaw(`${server.url}/algorithms/Failing/invoke`, '{"a": 1, "b": 2}')
  const id = response.headers.get('x-request-id') ?? ''
  assert.equal(response.status, 500)
  assert.match(response.text, new RegExp(MESSAGE), "the body has the algorithm's own words")
  assert.doesNotMatch(response.text, /failing\.mjs| at |TypeError/, 'the body has no stack and no path')
  const logged = await linesOf(id)
  assert.deepEqual(
    logged.map((line) => line.msg),
    ['request failed', 'request completed'],
    `the lines of request ${id}: ${JSON.stringify(logged)}`,
  )
  assert.match(
    logged[0]?.err?.stack ?? '',
    new RegExp(`TypeError: ${MESSAGE}[^]*failing\\.mjs`),
    'the stack is in the log',
  )
  assert.equal(logged[1]?.status, 500, 'the access line has the status')
})

test("a client's own x-request-id is in every line of its request", async () => {
  const tooLarge = `{"number": ${'1'.repeat(server.config.maxBodyBytes)}}`
  const response = await postRaw(`${server.url}/invoke`, tooLarge, {
    'content-type': 'application/json',
    'x-request-id': 'client-id.42',
  })
  assert.equal(response.status, 413)
  assert.equal(response.headers.get('x-request-id'), 'client-id.42')
  const logged = await linesOf('client-id.42')
  assert.deepEqual(
    logged.map((line) => line.msg),
    ['request rejected', 'request completed'],
    `the lines of request client-id.42: ${JSON.stringify(logged)}`,
  )
})

// The service writes its access lines around pino (accessSink): they must be pino's, byte for byte.
test('an access line is byte for byte what pino at its defaults writes for the same fields', () => {
  // What node:http gives as a method or a URL: latin1 characters, any of them.
  const latin1 = fc.string({ unit: fc.nat(255).map((code) => String.fromCharCode(code)), maxLength: 100 })
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary', maxLength: 60 }),
      latin1,
      latin1,
      fc.integer({ min: 100, max: 599 }),
      fc.double({ min: 0, max: 1e7, noNaN: true }),
      fc.nat(),
      (id, method, url, status, durationMs, now) => {
        let written = ''
        const logger = pino(
          { timestamp: () => `,"time":${now}` },
          { write: (line: string) => (written = line) },
        )
        logger.info({ request_id: id, method, url, status, duration_ms: durationMs }, 'request completed')
        assert.equal(accessLine(id, method, url, status, durationMs, now), written)
      },
    ),
    { numRuns: 2000 },
  )
})

test('access lines go around pino only for a logger at its defaults, and nowhere above info', () => {
  const stream = { write: (_line: string) => {} }
  assert.equal(accessSink({ level: 'info', stream }), stream)
  assert.equal(accessSink({ level: 'debug', stream }), stream)
  const warn = accessSink({ level: 'warn', stream })
  assert.ok(warn !== null && warn !== stream, 'a sink that writes nothing')
  assert.equal(accessSink({ level: 'silent', stream }) === stream, false)
  // Anything that changes pino's line: through pino.
  assert.equal(accessSink({ level: 'info', stream, base: null }), null)
  assert.equal(accessSink({ level: 'info' }), null)
  assert.equal(accessSink(false), null)
  assert.equal(accessSink(undefined), null)
})

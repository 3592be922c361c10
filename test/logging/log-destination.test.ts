import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { BatchedLines, batchSink } from '../../src/logging/log-destination.js'
import { until } from '../helpers/time.js'

const dir = mkdtempSync(join(tmpdir(), 'algoserve-log-'))
after(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
/** A batch destination over a real file written synchronously, so that what was handed over is on disk. */
function destination(options: { batchBytes?: number; flushMs?: number }) {
  const path = join(dir, `log-${files++}.ndjson`)
  const lines = new BatchedLines(batchSink(path, true), options)
  return { lines, read: () => readFileSync(path, 'utf8') }
}

test('lines below the batch size wait, and flushSync writes them all in order', () => {
  const { lines, read } = destination({ batchBytes: 1000, flushMs: 60_000 })
  lines.write('one\n')
  lines.write('two\n')
  assert.equal(read(), '', 'nothing is handed over before the batch fills')
  lines.flushSync()
  assert.equal(read(), 'one\ntwo\n', 'flushSync writes every line taken')
})

test('a full batch is handed over at once', () => {
  const { lines, read } = destination({ batchBytes: 12, flushMs: 60_000 })
  lines.write('12345\n')
  assert.equal(read(), '', 'six bytes are below the batch of twelve')
  lines.write('67890\n')
  assert.equal(read(), '12345\n67890\n', 'twelve bytes fill the batch')
  lines.write('x\n')
  assert.equal(read(), '12345\n67890\n', 'the next batch starts empty')
})

test('a line longer than a batch is written whole, after the lines before it', () => {
  const { lines, read } = destination({ batchBytes: 16, flushMs: 60_000 })
  lines.write('first\n')
  const long = `${'é'.repeat(20)}\n`
  lines.write(long)
  assert.equal(read(), `first\n${long}`, 'the batch, then the long line on its own')
  lines.write('after\n')
  lines.flushSync()
  assert.equal(read(), `first\n${long}after\n`, 'the next batch starts empty')
})

test('batches written asynchronously arrive whole and in order while their buffers are used again', async () => {
  const path = join(dir, `log-${files++}.ndjson`)
  const lines = new BatchedLines(batchSink(path, false), { batchBytes: 256, flushMs: 60_000 })
  // Hundreds of batches, most handed over while an earlier one is still being written.
  const expected = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'x€'.repeat(i % 13)}\n`).join('')
  for (const line of expected.split(/(?<=\n)/)) lines.write(line)
  lines.write(`${'.'.repeat(255)}\n`)
  const size = Buffer.byteLength(expected) + 256
  await until(() => existsSync(path) && statSync(path).size >= size, 10_000, 'every batch was written', 10)
  assert.equal(readFileSync(path, 'utf8'), `${expected}${'.'.repeat(255)}\n`, 'every byte, once, in order')
})

test('a quiet logger still gets its lines out after flushMs', async () => {
  const { lines, read } = destination({ batchBytes: 1000, flushMs: 20 })
  lines.write('alone\n')
  await until(() => read() !== '', 5000, 'a line was written', 10)
  assert.equal(read(), 'alone\n', 'the periodic hand-over wrote the line')
})

test('pino lines, multi-byte ones included, arrive whole and in order', () => {
  const { lines, read } = destination({ batchBytes: 300, flushMs: 60_000 })
  const log = pino({ base: undefined, timestamp: false }, lines)
  const messages = Array.from({ length: 50 }, (_, i) => `request ${i} ${'é€😀'.repeat(i % 7)}`)
  for (const msg of messages) log.info({ request_id: msg.length }, msg)
  lines.flushSync()
  const written = read()
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { msg: string; request_id: number })
  assert.deepEqual(
    written.map((line) => line.msg),
    messages,
    'every line, once, in order',
  )
  assert.ok(
    written.every((line) => line.request_id === line.msg.length),
    'each line keeps its own fields',
  )
})

const DESTINATION = fileURLToPath(new URL('../../src/logging/log-destination.ts', import.meta.url))

/** A child process that writes `count` lines to stdoutDestination() (far below a batch), then `ending`. */
function linesBefore(ending: string, count = 20): { stdout: string; status: number | null } {
  const script = `
    import { stdoutDestination } from ${JSON.stringify(DESTINATION)}
    const lines = stdoutDestination()
    for (let i = 0; i < ${count}; i++) lines.write('line ' + i + '\\n')
    ${ending}`
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { stdout: child.stdout, status: child.status }
}

const expected = (count = 20) => Array.from({ length: count }, (_, i) => `line ${i}\n`).join('')

test('the lines taken are written when the process exits, whatever ends it', async (t) => {
  const endings: Record<string, string> = {
    'process.exit': 'process.exit(3)',
    'an uncaught exception': "setImmediate(() => { throw new Error('crash') })",
    'an unhandled rejection': "Promise.reject(new Error('crash'))",
    'the event loop running dry': '',
  }
  for (const [name, ending] of Object.entries(endings)) {
    await t.test(name, () => {
      const { stdout, status } = linesBefore(ending)
      assert.notEqual(status, null, 'the child ended by itself')
      assert.equal(stdout, expected(), `every line, once, in order, after ${name}`)
    })
  }
})

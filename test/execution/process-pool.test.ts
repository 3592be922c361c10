// The processes of a process algorithm, with real child processes that misbehave on demand
// (test/fixtures/misbehaving/on-demand-js, and its Python twin misbehaving/on-demand-py): calls and their
// answers, progress, stderr in the log, a time limit and an abort (SIGTERM, then SIGKILL for one that ignores
// it), exits, garbage and huge lines, each failing its call with a clear error and the process replaced;
// answers out of turn dropped without harm to the next call; a program that answers once and exits; stderr
// bounded; the lanes' 503; a process that never starts; and a shutdown that leaves none behind.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import type { Algorithm } from '../../src/algorithms/algorithm.js'
import { loadManifest } from '../../src/algorithms/process-manifest.js'
import { AlgorithmError, RunTimeLimitError, ServiceUnavailableError } from '../../src/errors.js'
import { AlgorithmProcess, KILL_GRACE_MS } from '../../src/execution/algorithm-process.js'
import {
  LogBudget,
  STDERR_BYTES_PER_SECOND,
  STDERR_LINES_PER_SECOND,
} from '../../src/execution/log-budget.js'
import { ProcessPool } from '../../src/execution/process-pool.js'
import { DEFAULT_MAX_PROGRESS_BYTES, DEFAULT_MAX_RESULT_BYTES } from '../../src/execution/run-way.js'
import { RunFailure } from '../../src/execution/timed-run.js'
import { onDemandFolder } from '../helpers/misbehaviour.js'
import { sleep, until } from '../helpers/time.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/misbehaving/on-demand-js/', import.meta.url))
const PYTHON_FIXTURE = fileURLToPath(new URL('../fixtures/misbehaving/on-demand-py/', import.meta.url))
/** The fixture in each language, for the behaviours both have. */
const PROGRAMS = [
  { language: 'Node.js', command: [process.execPath, join(FIXTURE, 'process.mjs')] },
  { language: 'Python', command: ['python3', join(PYTHON_FIXTURE, 'process.py')] },
]
const folders: string[] = []
const pools: ProcessPool[] = []
after(async () => {
  await Promise.all(pools.map((pool) => pool.close()))
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

/** The fixture's algorithm with other members in its algorithm.json. */
function algorithm(members: Record<string, unknown> = {}): Algorithm {
  const folder = onDemandFolder(members)
  folders.push(folder)
  return loadManifest(join(folder, 'algorithm.json'))
}

interface LogLine {
  level: number
  msg: string
  algorithm?: string
  pid?: number
  job_id?: string
  request_id?: string
  dropped_lines?: number
  dropped_bytes?: number
}

const WARN = 40

function startPool(
  members: Record<string, unknown> = {},
  options: { invokeQueueTimeoutMs?: number; sharedBy?: number } = {},
) {
  const lines: LogLine[] = []
  const log = pino({ level: 'debug' }, { write: (text: string) => lines.push(JSON.parse(text)) })
  const pool = new ProcessPool(algorithm(members), { invokeQueueTimeoutMs: 5000, ...options })
  pools.push(pool)
  pool.start(log as unknown as FastifyBaseLogger)
  return { pool, lines }
}

const running = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const pidOf = async (pool: ProcessPool) =>
  ((await pool.run({ mode: 'pid' }, { lane: 'invoke' })).result as { pid: number }).pid

test('a call is answered with the result, measured, and the timeout_ms it was given', async () => {
  const { pool } = startPool()
  const run = await pool.run({}, { lane: 'job', timeoutMs: 4000 })
  const result = run.result as { pid: number; timeout_ms: number }
  assert.equal(result.timeout_ms, 4000)
  assert.ok(pool.pids.includes(result.pid))
  assert.ok(run.elapsedSeconds >= 0)
})

test('integers past a double stay exact both ways', async () => {
  const { pool } = startPool({ result: { type: 'object' } })
  const run = await pool.run({ mode: 'big', n: 18446744073709551617n }, { lane: 'invoke' })
  assert.deepEqual(run.result, { seen: '18446744073709551617', n: 18446744073709551617n })
})

test('progress lines reach the progress callback, clamped to [0, 1]; the result follows', async () => {
  const { pool } = startPool()
  const seen: [number, string | undefined][] = []
  const run = await pool.run(
    { mode: 'progress' },
    { lane: 'job', progress: (fraction, message) => seen.push([fraction, message]) },
  )
  assert.deepEqual(seen, [
    [0.25, undefined],
    [0.5, 'half way'],
    [1, undefined],
  ])
  assert.equal(typeof (run.result as { pid: number }).pid, 'number')
})

test('what the process writes on stderr goes to the log, a line each, tagged with the algorithm', async () => {
  const { pool, lines } = startPool()
  await pool.run({ mode: 'stderr' }, { lane: 'invoke' })
  await until(() => lines.some((line) => line.msg === 'and another'), 5000, 'the stderr lines logged')
  const logged = lines.filter((line) => line.msg === 'a line for the log' || line.msg === 'and another')
  assert.equal(logged.length, 2)
  for (const line of logged) assert.equal(line.algorithm, 'Misbehaving')
})

test("an error line fails the call in the algorithm's own words, and the process stays", async () => {
  const { pool } = startPool()
  const before = await pidOf(pool)
  await assert.rejects(pool.run({ mode: 'error' }, { lane: 'invoke' }), (error: unknown) => {
    assert.ok(error instanceof RunFailure)
    assert.equal(error.message, 'the input is not to my liking')
    return true
  })
  assert.equal(await pidOf(pool), before)
})

test('a result that breaks the result schema fails the call; the process stays', async () => {
  const { pool } = startPool()
  const before = await pidOf(pool)
  await assert.rejects(pool.run({ mode: 'bad-result' }, { lane: 'invoke' }), /breaks its result schema/)
  assert.equal(await pidOf(pool), before)
})

for (const [mode, expected] of [
  ['crash', /^its process exited with code 3 during the call$/],
  ['garbage', /^its process wrote a line that is not JSON$/],
] as const) {
  test(`${mode}: the call fails saying so (never what it wrote), the process is replaced, the next call works`, async () => {
    const { pool } = startPool()
    const before = await pidOf(pool)
    await assert.rejects(pool.run({ mode }, { lane: 'invoke' }), (error: unknown) => {
      assert.ok(error instanceof RunFailure)
      assert.match(error.message, expected)
      return true
    })
    assert.equal(running(before), false)
    const next = await until(() => pool.pids.length === 1 && pidOf(pool), 10_000, 'a new process')
    assert.notEqual(next, before)
  })
}

test('a result longer than maxResultBytes fails the call in those words and the process is replaced', async () => {
  const { pool } = startPool({ maxResultBytes: 64 * 1024 })
  const before = await pidOf(pool)
  const run = await pool.run({ mode: 'huge', bytes: 60 * 1024 }, { lane: 'invoke' })
  assert.equal((run.result as { pad: string }).pad.length, 60 * 1024)
  await assert.rejects(
    pool.run({ mode: 'huge', bytes: 200 * 1024 }, { lane: 'invoke' }),
    (error: unknown) => {
      assert.ok(error instanceof RunFailure)
      assert.equal(
        error.message,
        `its result was larger than its limit of ${64 * 1024} bytes (maxResultBytes)`,
      )
      return true
    },
  )
  assert.equal(running(before), false)
  assert.notEqual(await pidOf(pool), before)
})

test('past its time limit a process gets SIGTERM and the call fails with the time limit; replaced', {
  timeout: 20_000,
}, async () => {
  const { pool } = startPool()
  const before = await pidOf(pool)
  await assert.rejects(pool.run({ mode: 'hang' }, { lane: 'job', timeoutMs: 200 }), RunTimeLimitError)
  assert.equal(running(before), false)
  assert.notEqual(await pidOf(pool), before)
})

test('one that ignores SIGTERM gets SIGKILL after the grace; the call fails once it is gone', {
  timeout: 20_000,
}, async () => {
  const { pool } = startPool()
  const before = await pidOf(pool)
  const started = Date.now()
  await assert.rejects(pool.run({ mode: 'stubborn' }, { lane: 'job', timeoutMs: 200 }), RunTimeLimitError)
  assert.ok(Date.now() - started >= 200 + KILL_GRACE_MS - 50, 'the call waited for the SIGKILL')
  assert.equal(running(before), false)
  assert.notEqual(await pidOf(pool), before)
})

test("an abort (a job's cancel) stops the process and fails the call with the signal's reason", {
  timeout: 20_000,
}, async () => {
  const { pool } = startPool()
  const before = await pidOf(pool)
  const controller = new AbortController()
  const call = pool.run({ mode: 'hang' }, { lane: 'job', signal: controller.signal })
  setTimeout(() => controller.abort('cancelled'), 100)
  await assert.rejects(call, (reason: unknown) => reason === 'cancelled')
  assert.equal(running(before), false)
  assert.notEqual(await pidOf(pool), before)
})

test('one call at a time per process: an /invoke call waits its bound for a free one, then 503', async () => {
  const { pool } = startPool({}, { invokeQueueTimeoutMs: 100 })
  await pidOf(pool)
  const busy = pool.run({ mode: 'hang' }, { lane: 'job', timeoutMs: 1000 })
  await assert.rejects(pool.run({}, { lane: 'invoke' }), ServiceUnavailableError)
  // A job waits for as long as it takes: it gets the process once the hang is stopped.
  const waiting = pool.run({}, { lane: 'job' })
  await assert.rejects(busy, RunTimeLimitError)
  assert.equal(typeof ((await waiting).result as { pid: number }).pid, 'number')
})

test('HTTP processes sharing the machine divide instances among them, at least one each', async () => {
  const five = startPool({ instances: 5 }, { sharedBy: 2 }).pool
  const one = startPool({ instances: 1 }, { sharedBy: 2 }).pool
  await until(() => five.pids.length === 2 && one.pids.length === 1, 10_000, 'the processes of each pool')
  // None more starts later.
  await sleep(500)
  assert.deepEqual([five.pids.length, one.pids.length], [2, 1])
})

test('instances: that many processes, taking calls at once', async () => {
  const { pool } = startPool({ instances: 3 })
  await until(() => pool.pids.length === 3, 10_000, 'three processes')
  const hangs = [0, 1].map(() =>
    assert.rejects(pool.run({ mode: 'hang' }, { lane: 'job', timeoutMs: 300 }), RunTimeLimitError),
  )
  const answered = await pool.run({}, { lane: 'invoke' })
  assert.equal(typeof (answered.result as { pid: number }).pid, 'number')
  await Promise.all(hangs)
})

test('a process that never starts: failure names it, /invoke calls get a 503 at once, it is tried again', async () => {
  const { pool, lines } = startPool({ command: ['/nonexistent/algorithm-program'] })
  await until(() => pool.failure, 5000, 'the failure seen')
  assert.equal(pool.failure, 'could not start (ENOENT) at start')
  await assert.rejects(pool.run({}, { lane: 'invoke' }), (error: unknown) => {
    assert.ok(error instanceof ServiceUnavailableError)
    assert.match(error.message, /The algorithm 'Misbehaving' is not running: its process could not start/)
    return true
  })
  await until(
    () => lines.filter((line) => /could not start \(ENOENT\) at start/.test(line.msg)).length >= 2,
    5000,
    'a second attempt',
  )
})

test('a process that exits at once after starting is a start failure too', async () => {
  const { pool } = startPool({ command: [process.execPath, '-e', 'process.exit(5)'] })
  await until(() => pool.failure, 5000, 'the failure seen')
  assert.equal(pool.failure, 'exited with code 5 at start')
})

test('a process that failed to start and then starts: the failure clears once it has run a while', async () => {
  // Exits at once on its first start (leaving a mark), runs the fixture from then on.
  const folder = mkdtempSync(join(tmpdir(), 'algoserve-flaky-'))
  folders.push(folder)
  const mark = join(folder, 'started-once')
  const script = `const fs = require('node:fs'); if (!fs.existsSync(${JSON.stringify(mark)})) { fs.writeFileSync(${JSON.stringify(mark)}, ''); process.exit(1) } import(${JSON.stringify(join(FIXTURE, 'process.mjs'))})`
  const { pool } = startPool({ command: [process.execPath, '-e', script] })
  await until(() => pool.failure, 5000, 'the first start failing')
  assert.equal(pool.failure, 'exited with code 1 at start')
  await until(() => pool.failure === undefined, 10_000, 'the failure cleared')
  assert.equal(typeof (await pidOf(pool)), 'number')
})

test('readiness is false while none of the processes runs, not while one of two keeps failing to start', async () => {
  // Of two instances, the one that claims the mark runs the fixture; the other exits at every start.
  const folder = mkdtempSync(join(tmpdir(), 'algoserve-half-'))
  folders.push(folder)
  const mark = join(folder, 'claimed')
  const script = `const fs = require('node:fs'); try { fs.writeFileSync(${JSON.stringify(mark)}, '', { flag: 'wx' }) } catch { process.exit(1) } import(${JSON.stringify(join(FIXTURE, 'process.mjs'))})`
  const { pool } = startPool({ command: [process.execPath, '-e', script], instances: 2 })
  await until(() => pool.failure, 5000, 'the second instance failing to start')
  assert.equal(typeof (await pidOf(pool)), 'number', 'the first one answers')
  assert.equal(pool.ready(), true)
  const { pool: broken } = startPool({ command: [process.execPath, '-e', 'process.exit(5)'] })
  await until(() => broken.failure, 5000, 'the failure seen')
  assert.equal(broken.ready(), false)
})

test('a progress hook that throws is logged; the run goes on to its result', async () => {
  const { pool, lines } = startPool()
  const run = await pool.run(
    { mode: 'progress' },
    {
      lane: 'job',
      progress: () => {
        throw new Error('hook broken')
      },
    },
  )
  assert.equal(typeof (run.result as { pid: number }).pid, 'number')
  assert.ok(lines.some((line) => line.msg === 'a progress hook failed'))
})

test('close: stdin closed, every process gone, none started again', async () => {
  const { pool } = startPool({ instances: 2 })
  await until(() => pool.pids.length === 2, 10_000, 'two processes')
  const pids = pool.pids
  await pool.close()
  for (const pid of pids) assert.equal(running(pid), false)
  assert.deepEqual(pool.pids, [])
})

test('AlgorithmError is what the executor makes of these failures (checked where it is thrown)', () => {
  assert.ok(new RunTimeLimitError('Misbehaving', 1) instanceof AlgorithmError)
})

const warnings = (lines: LogLine[], text: string) =>
  lines.filter((line) => line.level === WARN && line.algorithm === 'Misbehaving' && line.msg.includes(text))

for (const { language, command } of PROGRAMS) {
  test(`${language}: a second answer to an ended call is logged and dropped; the call running meanwhile gets its own`, async () => {
    const { pool, lines } = startPool({ command })
    const first = (await pool.run({ mode: 'twice', after_ms: 200 }, { lane: 'invoke' })).result
    // Running when the second answer to the first call comes.
    const second = (await pool.run({ mode: 'slow', after_ms: 600 }, { lane: 'invoke' })).result
    assert.deepEqual(second, first, 'the same process answered both')
    assert.equal(warnings(lines, 'dropped a result message for the call 0, which had ended').length, 1)
  })

  test(`${language}: a message for no call it was given is logged and dropped; the next call is answered`, async () => {
    const { pool, lines } = startPool({ command })
    const first = (await pool.run({ mode: 'stray', after_ms: 200 }, { lane: 'invoke' })).result
    const second = (await pool.run({ mode: 'slow', after_ms: 600 }, { lane: 'invoke' })).result
    assert.deepEqual(second, first)
    assert.equal(warnings(lines, 'dropped a progress message for no call its process was given').length, 1)
  })

  test(`${language}: an id it was never given, then its answer: the message dropped, the call answered`, async () => {
    const { pool, lines } = startPool({ command })
    const before = await pidOf(pool)
    const run = await pool.run({ mode: 'wrong-id' }, { lane: 'invoke' })
    assert.equal((run.result as { pid: number }).pid, before)
    assert.equal(warnings(lines, 'dropped a result message for no call its process was given').length, 1)
  })

  test(`${language}: an answer after its call's time limit is logged and dropped; the next call is answered`, {
    timeout: 20_000,
  }, async () => {
    const { pool, lines } = startPool({ command })
    const before = await pidOf(pool)
    // It ignores SIGTERM: its answer comes while it is being stopped, before the SIGKILL.
    await assert.rejects(
      pool.run({ mode: 'late', after_ms: 300 }, { lane: 'job', timeoutMs: 100 }),
      RunTimeLimitError,
    )
    assert.equal(warnings(lines, 'dropped a result message for the call 1, which had ended').length, 1)
    assert.equal(running(before), false, 'the stop stands')
    assert.notEqual(await pidOf(pool), before)
  })

  test(`${language}: a program that answers once and exits: every call answered, each by a new process`, {
    timeout: 60_000,
  }, async () => {
    const { pool, lines } = startPool({ command })
    const pids = new Set<number>()
    // linger_ms 0: it exits as soon as it answered; 100: the next call is surely written to it first.
    for (const linger_ms of [0, 100]) {
      for (let i = 0; i < 10; i++) {
        const run = await pool.run({ mode: 'once', linger_ms }, { lane: 'invoke', timeoutMs: 10_000 })
        pids.add((run.result as { pid: number }).pid)
      }
    }
    assert.equal(pids.size, 20)
    assert.equal(
      lines.filter((line) => line.level >= WARN).length,
      0,
      'exiting cleanly between calls is no cause for a warning',
    )
  })

  test(`${language}: stderr is logged within the algorithm's budget; what is over is counted in a summary`, {
    timeout: 30_000,
  }, async () => {
    const { pool, lines } = startPool({ command })
    const written = 20_000
    const started = Date.now()
    await pool.run({ mode: 'flood', bytes: written * 1000 }, { lane: 'job', logContext: { job_id: 'j1' } })
    const logged = () => lines.filter((line) => line.msg.startsWith('xxx'))
    const dropped = () =>
      lines
        .filter((line) => line.dropped_lines !== undefined)
        .reduce((sum, line) => sum + (line.dropped_lines as number), 0)
    // Every line written is either logged or counted, once its second's summary is out.
    await until(() => logged().length + dropped() === written, 5000, 'every line logged or counted')
    const seconds = Math.ceil((Date.now() - started) / 1000) + 1
    assert.ok(logged().length <= STDERR_LINES_PER_SECOND * seconds, `${logged().length} lines logged`)
    const bytes = logged().reduce((sum, line) => sum + line.msg.length, 0)
    assert.ok(bytes <= STDERR_BYTES_PER_SECOND * seconds, `${bytes} bytes logged`)
    for (const line of logged()) assert.equal(line.job_id, 'j1')
    const summary = warnings(lines, "bytes of stderr from 'Misbehaving' in the last second")
    assert.ok(summary.length >= 1 && summary.length <= seconds)
    assert.match(summary[0]?.msg ?? '', /^dropped [0-9]+ lines, [0-9]+ bytes of stderr from 'Misbehaving'/)
  })
}

test('stderr lines carry the request or job id of the call running or last run', async () => {
  const { pool, lines } = startPool()
  await pool.run({ mode: 'stderr' }, { lane: 'invoke', logContext: { request_id: 'req-7' } })
  await pool.run({ mode: 'stderr' }, { lane: 'job', logContext: { job_id: 'job-8' } })
  await until(() => lines.filter((line) => line.msg === 'and another').length === 2, 5000, 'both logged')
  const logged = lines.filter((line) => line.msg === 'a line for the log' || line.msg === 'and another')
  assert.deepEqual(
    logged.map((line) => [line.request_id, line.job_id]),
    [
      ['req-7', undefined],
      ['req-7', undefined],
      [undefined, 'job-8'],
      [undefined, 'job-8'],
    ],
  )
})

test('an answer after an abort is logged and dropped; the next call is answered', {
  timeout: 20_000,
}, async () => {
  const { pool, lines } = startPool()
  const before = await pidOf(pool)
  const controller = new AbortController()
  const call = pool.run({ mode: 'late', after_ms: 300 }, { lane: 'job', signal: controller.signal })
  setTimeout(() => controller.abort('cancelled'), 100)
  await assert.rejects(call, (reason: unknown) => reason === 'cancelled')
  assert.equal(warnings(lines, 'dropped a result message for the call 1, which had ended').length, 1)
  assert.notEqual(await pidOf(pool), before)
})

test('a process moves through its named states, and takes a call only when idle', {
  timeout: 20_000,
}, async () => {
  const lines: LogLine[] = []
  const log = pino({ level: 'info' }, { write: (text: string) => lines.push(JSON.parse(text)) })
  const fastify = log as unknown as FastifyBaseLogger
  const budgets = {
    stderr: new LogBudget('Misbehaving', 'stderr', fastify),
    strays: new LogBudget('M', 's', fastify),
  }
  const spec = { command: [process.execPath, join(FIXTURE, 'process.mjs')], cwd: FIXTURE, instances: 1 }
  const limits = { maxResultBytes: DEFAULT_MAX_RESULT_BYTES, maxProgressBytes: DEFAULT_MAX_PROGRESS_BYTES }
  const program = new AlgorithmProcess({
    name: 'Misbehaving',
    spec,
    log: fastify,
    budgets,
    limits,
    resultSchema: { type: 'object' },
  })
  assert.equal(program.state, 'starting')
  await program.started
  assert.equal(program.state, 'idle')
  const call = program.call({ mode: 'slow', after_ms: 100 })
  assert.equal(program.state, 'busy')
  assert.throws(() => program.call({}), /cannot go from busy to busy/)
  await call
  assert.equal(program.state, 'idle')
  const stopping = program.stop(new Error('enough'))
  assert.equal(program.state, 'stopping')
  assert.throws(() => program.call({}), /cannot go from stopping to busy/)
  await stopping
  assert.equal(program.state, 'gone')
})

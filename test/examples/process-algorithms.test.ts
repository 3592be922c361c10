// The example process algorithms (examples/algorithms/fibonacci-python, examples/algorithms/echo-bash)
// loaded into a real service through the setting, on each job backend: called and queued with integers
// past a double, exact both ways. And docs/algorithms.md's algorithm.json with its Python skeleton, run.
// Each is skipped, saying so, where its interpreter is not installed.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { loadManifest } from '../../src/algorithms/process-manifest.js'
import { ProcessPool } from '../../src/execution/process-pool.js'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { waitForJob } from '../helpers/jobs.js'
import { type ExactBody as Body, parseExact, postExact as post } from '../helpers/json.js'

const FIBONACCI = fileURLToPath(new URL('../../examples/algorithms/fibonacci-python', import.meta.url))
const ECHO = fileURLToPath(new URL('../../examples/algorithms/echo-bash', import.meta.url))

/** False when `program --version` runs; otherwise why the test is skipped. */
function missing(program: string): string | false {
  try {
    execFileSync(program, ['--version'], { stdio: 'ignore', timeout: 10_000 })
    return false
  } catch {
    return `${program} is not installed`
  }
}

// F(300), computed by hand with BigInt: the reference the example is checked against.
function fibonacci(n: number): bigint {
  let [a, b] = [0n, 1n]
  for (let i = 0; i < n; i++) [a, b] = [b, a + b]
  return a
}

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({ algorithms: [FIBONACCI, ECHO] })
  })
  after(() => server.close())

  describe('Python (standard library only)', { skip: missing('python3') }, () => {
    test('called: F(300) exact, past a double', async () => {
      const { status, json } = await post(`${server.url}/algorithms/Fibonacci/invoke`, '{"n": 300}')
      assert.equal(status, 200)
      assert.deepEqual(json.result, { n: 300n, value: fibonacci(300) })
      assert.equal(json.metadata?.algorithm, 'Fibonacci')
    })

    test('queued: the job completes with the exact value; bad params are a 422 before it is stored', async () => {
      const bad = await post(`${server.url}/jobs`, '{"algorithm": "Fibonacci", "params": {"n": -1}}')
      assert.equal(bad.status, 422)
      assert.deepEqual(bad.json.detail?.[0]?.loc, ['body', 'params', 'n'])
      const created = await post(`${server.url}/jobs`, '{"algorithm": "Fibonacci", "params": {"n": 1000}}')
      assert.equal(created.status, 202)
      const id = String(created.json.job_id)
      await waitForJob(server.url, id)
      const job = parseExact(await (await fetch(`${server.url}/jobs/${id}`)).text()) as Body
      assert.equal(job.status, 'completed')
      assert.equal(job.result?.value, fibonacci(1000))
    })
  })

  describe('Bash', { skip: missing('bash') }, () => {
    test('called: its params back, digit for digit and character for character', async () => {
      const body = '{"text": "a \\"quoted\\" line\\nand ünïcode", "n": 18446744073709551617, "x": 0.5}'
      const { status, json } = await post(`${server.url}/algorithms/Echo/invoke`, body)
      assert.equal(status, 200)
      assert.deepEqual(json.result, {
        text: 'a "quoted" line\nand ünïcode',
        n: 18446744073709551617n,
        x: 0.5,
      })
    })

    test('queued: the job completes with its params', async () => {
      const created = await post(
        `${server.url}/jobs`,
        '{"algorithm": "Echo", "params": {"n": 12345678901234567890}}',
      )
      const id = String(created.json.job_id)
      await waitForJob(server.url, id)
      const job = parseExact(await (await fetch(`${server.url}/jobs/${id}`)).text()) as Body
      assert.equal(job.status, 'completed')
      assert.deepEqual(job.result, { n: 12345678901234567890n })
    })
  })
})

test("docs/algorithms.md's algorithm.json and Python skeleton load and answer", {
  skip: missing('python3'),
}, async () => {
  const text = readFileSync(new URL('../../docs/algorithms.md', import.meta.url), 'utf8')
  const manifest = /```json\n([\s\S]*?)```/.exec(text)?.[1]
  const skeleton = /```python\n([\s\S]*?)```/.exec(text)?.[1]
  assert.ok(manifest && skeleton, 'docs/algorithms.md shows both')
  // Short, with a refusal of params beside the result, progress and the failure.
  assert.ok(skeleton.trimEnd().split('\n').length <= 30, 'the skeleton stays short')
  const folder = mkdtempSync(join(tmpdir(), 'algoserve-doc-process-'))
  const pool = new ProcessPool(loadManifestIn(folder, manifest, skeleton), { invokeQueueTimeoutMs: 5000 })
  try {
    pool.start(pino({ level: 'silent' }) as unknown as FastifyBaseLogger)
    const seen: number[] = []
    const run = await pool.run({ n: 21 }, { lane: 'job', progress: (fraction) => seen.push(fraction) })
    assert.deepEqual(run.result, { value: 42 })
    assert.deepEqual(seen, [0.5])
    await assert.rejects(pool.run({}, { lane: 'job' }), /^Error: 'n'$/)
  } finally {
    await pool.close()
    rmSync(folder, { recursive: true, force: true })
  }
})

/** The docs' algorithm.json, whose command runs fibonacci.py, with the skeleton as that file. */
function loadManifestIn(folder: string, manifest: string, skeleton: string) {
  writeFileSync(join(folder, 'algorithm.json'), manifest)
  writeFileSync(join(folder, 'fibonacci.py'), skeleton)
  return loadManifest(join(folder, 'algorithm.json'))
}

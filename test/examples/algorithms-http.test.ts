// The example modules loaded into a real service through the setting (ALGOSERVE_ALGORITHMS), on each job
// backend: listed and described, called (POST /algorithms/{name}/invoke), queued (POST /jobs), their
// params checked (422 at the right `loc`), big integers exact both ways, the slow one cancelled mid-run
// and answering before its deadline. The TypeScript example is built first with `npm run build:examples`.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parse } from 'lossless-json'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { waitForJob } from '../helpers/jobs.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const EXAMPLES = `${ROOT}examples/algorithms`
const TYPESCRIPT_BUILD = `${EXAMPLES}/typescript/dist`
// The TypeScript example is compiled against the package's own types and imports it at run time: both
// are in dist/, which `npm install` builds.
const NO_PACKAGE_BUILD = !existsSync(`${ROOT}dist/index.js`) && 'no dist/index.js: run `npm run build` first'
const BIG = '18446744073709551617'

before(async () => {
  if (NO_PACKAGE_BUILD) return
  await promisify(execFile)('npm', ['run', '--silent', 'build:examples'], { cwd: ROOT, timeout: 120_000 })
})

async function post(url: string, body: string) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  const text = await response.text()
  return { status: response.status, text, json: parse(text) as Record<string, unknown> }
}

/** JSON with exact integers (lossless-json's numbers), as plain values: integers as BigInt past 2^53. */
const plain = (text: string) =>
  parse(text, null, (digits) => {
    const n = Number(digits)
    return Number.isSafeInteger(n) || !/^-?[0-9]+$/.test(digits) ? n : BigInt(digits)
  }) as Record<string, unknown>

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({
      // SlowCount's own limit is a minute: a call gets this one (time enough for a new thread to start on
      // a busy machine).
      invokeTimeoutMs: 3000,
      algorithms: [EXAMPLES, ...(NO_PACKAGE_BUILD ? [] : [TYPESCRIPT_BUILD])],
    })
  })
  after(() => server.close())

  test('listed with PrimeChecker, and each described with its schemas, examples and time limit', async () => {
    const list = (await (await fetch(`${server.url}/algorithms`)).json()) as {
      algorithms: { name: string; version: string; description: string }[]
    }
    const names = list.algorithms.map((a) => a.name)
    // The folder's process algorithms (examples/algorithms/*/algorithm.json) are listed too; they are
    // tested in process-algorithms.test.ts.
    const expected = [
      'Collatz',
      'Echo',
      'Fibonacci',
      'PrimeChecker',
      'SlowCount',
      ...(NO_PACKAGE_BUILD ? [] : ['WordCount']),
    ]
    assert.deepEqual(names, expected.sort())
    const collatz = (await (await fetch(`${server.url}/algorithms/Collatz`)).json()) as Record<
      string,
      unknown
    >
    assert.equal(collatz.version, '1.0.0')
    assert.deepEqual(collatz.examples, [{ params: { n: 27 } }])
    assert.equal(collatz.timeout_ms, 5000)
    assert.deepEqual((collatz.params as { required: string[] }).required, ['n'])
  })

  test('Collatz: called with an integer of any size, answered exactly; bad params are a 422 at their place', async () => {
    const small = await post(`${server.url}/algorithms/Collatz/invoke`, '{"n": 27}')
    assert.equal(small.status, 200, small.text)
    assert.deepEqual(JSON.parse(small.text).result, { steps: 111, peak: 9232 })
    const metadata = JSON.parse(small.text).metadata
    assert.equal(metadata.algorithm, 'Collatz')
    assert.equal(metadata.version, '1.0.0')

    // 2^64 + 1 in, its peak (past 2^64) out with every digit.
    const big = await post(`${server.url}/algorithms/Collatz/invoke`, `{"n": ${BIG}}`)
    assert.equal(big.status, 200, big.text)
    const { steps, peak } = plain(big.text).result as { steps: number; peak: bigint }
    let x = BigInt(BIG)
    let highest = x
    for (let i = 0; i < steps; i++) {
      x = x % 2n === 0n ? x / 2n : 3n * x + 1n
      if (x > highest) highest = x
    }
    assert.equal(x, 1n)
    assert.equal(peak, highest)

    for (const [body, loc] of [
      ['{"n": 0}', ['body', 'n']],
      ['{"n": "27"}', ['body', 'n']],
      ['{"m": 27}', ['body', 'n']],
    ] as const) {
      const bad = await post(`${server.url}/algorithms/Collatz/invoke`, body)
      assert.equal(bad.status, 422, `${body}: ${bad.text}`)
      const locs = (JSON.parse(bad.text).detail as { loc: string[] }[]).map((problem) => problem.loc)
      assert.ok(
        locs.some((at) => JSON.stringify(at) === JSON.stringify(loc)),
        `${body}: ${JSON.stringify(locs)}`,
      )
    }
  })

  test('Collatz queued: checked before it is stored, then run to its result', async () => {
    const bad = await post(`${server.url}/jobs`, '{"algorithm": "Collatz", "params": {"n": -1}}')
    assert.equal(bad.status, 422, bad.text)
    assert.deepEqual((JSON.parse(bad.text).detail as { loc: string[] }[])[0]?.loc, ['body', 'params', 'n'])

    const created = await post(`${server.url}/jobs`, `{"algorithm": "Collatz", "params": {"n": ${BIG}}}`)
    assert.equal(created.status, 202, created.text)
    const id = String(JSON.parse(created.text).job_id)
    const job = await waitForJob(server.url, id)
    assert.equal(job.status, 'completed', JSON.stringify(job))
    assert.equal(job.algorithm, 'Collatz')
    const text = await (await fetch(`${server.url}/jobs/${id}`)).text()
    const direct = await post(`${server.url}/algorithms/Collatz/invoke`, `{"n": ${BIG}}`)
    assert.deepEqual(plain(text).result as object, plain(direct.text).result)
  })

  test('SlowCount: a call returns what it counted before its deadline; a running job is cancelled at its next step', async () => {
    // Ten seconds of counting asked for, three allowed: it answers, short, rather than be stopped.
    const started = Date.now()
    const call = await post(`${server.url}/algorithms/SlowCount/invoke`, '{"to": 100, "step_ms": 100}')
    assert.equal(call.status, 200, call.text)
    const result = JSON.parse(call.text).result as { counted: number; complete: boolean }
    assert.equal(result.complete, false)
    assert.ok(result.counted >= 1 && result.counted < 30, call.text)
    assert.ok(Date.now() - started < 8000)

    const created = await post(
      `${server.url}/jobs`,
      '{"algorithm": "SlowCount", "params": {"to": 1000, "step_ms": 50}}',
    )
    assert.equal(created.status, 202, created.text)
    const id = String(JSON.parse(created.text).job_id)
    await waitForJob(server.url, id, (job) => job.status === 'running')
    const cancel = await post(`${server.url}/jobs/${id}/cancel`, '')
    assert.equal(cancel.status, 200, cancel.text)
    const job = await waitForJob(server.url, id)
    assert.equal(job.status, 'failed')
    assert.equal(job.error, 'The job was cancelled.')
    // A short job after it runs: the thread was given back.
    const next = await post(`${server.url}/algorithms/SlowCount/invoke`, '{"to": 2, "step_ms": 1}')
    assert.equal(next.status, 200, next.text)
    assert.deepEqual(JSON.parse(next.text).result, { counted: 2, complete: true })
  })

  test('WordCount (TypeScript, built by npm run build:examples): called and queued', {
    skip: NO_PACKAGE_BUILD,
  }, async () => {
    const call = await post(
      `${server.url}/algorithms/WordCount/invoke`,
      '{"text": "The cat and the hat", "top": 2}',
    )
    assert.equal(call.status, 200, call.text)
    assert.deepEqual(JSON.parse(call.text).result, {
      words: 5,
      distinct: 4,
      top: [
        { word: 'the', count: 2 },
        { word: 'and', count: 1 },
      ],
    })
    const bad = await post(`${server.url}/algorithms/WordCount/invoke`, '{"text": "x", "top": 0}')
    assert.equal(bad.status, 422, bad.text)
    const created = await post(
      `${server.url}/jobs`,
      '{"algorithm": "WordCount", "params": {"text": "a b a"}}',
    )
    assert.equal(created.status, 202, created.text)
    const job = await waitForJob(server.url, String(JSON.parse(created.text).job_id))
    assert.deepEqual(job.result, {
      words: 3,
      distinct: 2,
      top: [
        { word: 'a', count: 2 },
        { word: 'b', count: 1 },
      ],
    })
  })
})

// Process algorithms over real HTTP on every job backend: the Bash example (examples/algorithms/echo-bash)
// and a process that misbehaves on demand (test/fixtures/misbehaving/on-demand-js), loaded through the
// setting. Listed, described, in the OpenAPI document and in /readyz; called (POST /algorithms/{name}/invoke)
// and queued (POST /jobs) with exact integers; a crash, garbage, a hang and a cancel each end their call or
// job with a clear error, and the process is replaced for the next one. One that never starts fails /readyz.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { writeModules } from '../helpers/algorithms.js'
import { startApp, type TestApp } from '../helpers/app.js'
import { apiAndWorker, forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { type ExactBody as Body, parseExact, postExact as post } from '../helpers/json.js'
import { skipWithoutRedis } from '../helpers/redis.js'

const ECHO = fileURLToPath(new URL('../../examples/algorithms/echo-bash', import.meta.url))
const MISBEHAVING = fileURLToPath(new URL('../fixtures/misbehaving/on-demand-js', import.meta.url))
const BIG = '18446744073709551617123'

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({ algorithms: [ECHO, MISBEHAVING] })
  })
  after(() => server.close())

  const invoke = (name: string, body: string) => post(`${server.url}/algorithms/${name}/invoke`, body)
  const pidNow = async () => Number((await invoke('Misbehaving', '{}')).json.result?.pid)

  test('listed and described like modules, in the OpenAPI document, and checked by /readyz', async () => {
    const list = (await (await fetch(`${server.url}/algorithms`)).json()) as {
      algorithms: { name: string }[]
    }
    const names = list.algorithms.map((algorithm) => algorithm.name)
    assert.ok(names.includes('Echo') && names.includes('Misbehaving'), names.join())
    const described = (await (await fetch(`${server.url}/algorithms/Misbehaving`)).json()) as Record<
      string,
      unknown
    >
    assert.equal(described.timeout_ms, 1500)
    assert.equal(described.version, '1.0.0')
    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId?: string }>>
    }
    assert.equal(openapi.paths['/algorithms/Echo/invoke']?.post?.operationId, 'invoke_Echo')
    const ready = await fetch(`${server.url}/readyz`)
    const body = (await ready.json()) as { checks: Record<string, boolean> }
    assert.equal(ready.status, 200)
    assert.equal(body.checks['process:Echo'], true)
    assert.equal(body.checks['process:Misbehaving'], true)
  })

  test('POST /algorithms/{name}/invoke answers with the result, integers exact both ways', async () => {
    const { status, json } = await invoke(
      'Echo',
      `{"text": "héllo \\"there\\"", "n": ${BIG}, "list": [1, 2.5]}`,
    )
    assert.equal(status, 200)
    assert.deepEqual(json.result, { text: 'héllo "there"', n: BigInt(BIG), list: [1n, 2.5] })
    assert.equal(json.metadata?.algorithm, 'Echo')
    assert.equal(json.metadata?.version, '1.0.0')
  })

  test('params that fail the schema are a 422 and reach no process', async () => {
    const { status, json } = await invoke('Echo', '{"text": 5}')
    assert.equal(status, 422)
    assert.deepEqual(json.detail?.[0]?.loc, ['body', 'text'])
  })

  test('a crash is a 500 naming its exit code; the process is replaced and the next call works', async () => {
    const before = await pidNow()
    const { status, json } = await invoke('Misbehaving', '{"mode": "crash"}')
    assert.equal(status, 500)
    assert.equal(json.error, 'ALGORITHM_ERROR')
    assert.equal(
      json.message,
      "The algorithm 'Misbehaving' failed while running: its process exited with code 3 during the call",
    )
    assert.notEqual(await pidNow(), before)
  })

  test('garbage on stdout is a 500 that never shows it; replaced', async () => {
    const before = await pidNow()
    const { status, text, json } = await invoke('Misbehaving', '{"mode": "garbage"}')
    assert.equal(status, 500)
    assert.match(String(json.message), /its process wrote a line that is not JSON$/)
    assert.doesNotMatch(text, /this is not JSON/)
    assert.notEqual(await pidNow(), before)
  })

  test("an error line is a 500 in the algorithm's own words", async () => {
    const { status, json } = await invoke('Misbehaving', '{"mode": "error"}')
    assert.equal(status, 500)
    assert.equal(
      json.message,
      "The algorithm 'Misbehaving' failed while running: the input is not to my liking",
    )
  })

  test('a hang is stopped at its time limit (500), and the next call gets a new process', async () => {
    const before = await pidNow()
    const { status, json } = await invoke('Misbehaving', '{"mode": "hang"}')
    assert.equal(status, 500)
    assert.match(String(json.message), /exceeded its time limit of 1.5 s/)
    assert.notEqual(await pidNow(), before)
  })

  test('POST /jobs runs it: completed with the exact result, or failed saying why', async () => {
    const echo = await createJob(server.url, { algorithm: 'Echo', params: { text: 'queued' } })
    assert.equal(echo.status, 202)
    const done = await waitForJob(server.url, String(echo.json.job_id))
    assert.equal(done.status, 'completed')
    assert.deepEqual(done.result, { text: 'queued' })
    assert.equal(done.metadata?.algorithm, 'Echo')

    const big = await post(`${server.url}/jobs`, `{"algorithm": "Echo", "params": {"n": ${BIG}}}`)
    await waitForJob(server.url, String(big.json.job_id))
    const read = await fetch(`${server.url}/jobs/${big.json.job_id}`)
    assert.deepEqual((parseExact(await read.text()) as Body).result, { n: BigInt(BIG) })

    const crash = await createJob(server.url, { algorithm: 'Misbehaving', params: { mode: 'crash' } })
    const crashed = await waitForJob(server.url, String(crash.json.job_id))
    assert.equal(crashed.status, 'failed')
    assert.match(String(crashed.error), /its process exited with code 3 during the call/)

    const hang = await createJob(server.url, { algorithm: 'Misbehaving', params: { mode: 'hang' } })
    const hung = await waitForJob(server.url, String(hang.json.job_id))
    assert.equal(hung.status, 'failed')
    assert.equal(hung.error, 'The job exceeded the hard time limit of 1.5 s.')
  })

  test("a job's cancel stops its process, which is replaced", async () => {
    const before = await pidNow()
    // The stubborn mode ignores SIGTERM: the cancel still ends the job, by SIGKILL after the grace.
    const job = await createJob(server.url, { algorithm: 'Misbehaving', params: { mode: 'stubborn' } })
    const id = String(job.json.job_id)
    await waitForJob(server.url, id, (seen) => seen.status === 'running')
    const cancel = await fetch(`${server.url}/jobs/${id}/cancel`, { method: 'POST' })
    assert.equal(cancel.status, 200)
    const ended = await waitForJob(server.url, id)
    assert.equal(ended.status, 'failed')
    assert.equal(ended.error, 'The job was cancelled.')
    assert.notEqual(await pidNow(), before)
  })
})

describe('a process algorithm that never starts', () => {
  const folder = writeModules({
    'algorithm.json': JSON.stringify({
      name: 'Never',
      version: '1.0.0',
      description: 'Its program does not exist.',
      params: { type: 'object' },
      result: { type: 'object' },
      command: ['./no-such-program'],
    }),
  })
  let server: TestApp
  before(async () => {
    server = await startApp({ algorithms: [folder.dir, ECHO] })
  })
  after(async () => {
    await server.close()
    folder.remove()
  })

  test('/readyz is 503 naming it, its calls are 503 at once, and the other algorithms still answer', async () => {
    const ready = await fetch(`${server.url}/readyz`)
    const body = (await ready.json()) as { status: string; checks: Record<string, boolean> }
    assert.equal(ready.status, 503)
    assert.equal(body.status, 'not_ready')
    assert.equal(body.checks['process:Never'], false)
    assert.equal(body.checks['process:Echo'], true)
    const never = await post(`${server.url}/algorithms/Never/invoke`, '{}')
    assert.equal(never.status, 503)
    assert.equal(never.json.error, 'SERVICE_UNAVAILABLE')
    assert.match(
      String(never.json.message),
      /The algorithm 'Never' is not running: its process could not start/,
    )
    const echo = await post(`${server.url}/algorithms/Echo/invoke`, '{"text": "still here"}')
    assert.equal(echo.status, 200)
  })
})

describe('on Redis, an API process and an algoserve worker', { skip: skipWithoutRedis }, () => {
  const processes = apiAndWorker({ algorithms: [ECHO] })

  test("each starts the algorithm's processes: the API calls it, the worker runs its jobs", async () => {
    const call = await post(`${processes.api.url}/algorithms/Echo/invoke`, '{"text": "from the API"}')
    assert.equal(call.status, 200)
    assert.deepEqual(call.json.result, { text: 'from the API' })
    const job = await createJob(processes.api.url, { algorithm: 'Echo', params: { text: 'from a worker' } })
    const done = await waitForJob(processes.api.url, String(job.json.job_id))
    assert.equal(done.status, 'completed')
    assert.deepEqual(done.result, { text: 'from a worker' })
    const ready = (await (await fetch(`${processes.worker.url}/readyz`)).json()) as {
      checks: Record<string, boolean>
      algorithms: string[]
    }
    assert.equal(ready.checks['process:Echo'], true)
    assert.deepEqual(ready.algorithms, ['Echo', 'PrimeChecker'])
    assert.equal(processes.api.service.executor.checks()['process:Echo']?.(), true)
  })
})

// User algorithms over real HTTP, loaded from module files this test writes: GET /algorithms and
// /algorithms/{name}, POST /algorithms/{name}/invoke (params schema, BigInt both ways, the result
// schema, failures in the algorithm's own words, hard time limits, a thread that dies), and their jobs
// on every backend.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { defaultConfig } from '../../src/config.js'
import { createService } from '../../src/service.js'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import { postRaw, type TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { parseExact } from '../helpers/json.js'
import { freshPrefix, skipWithoutRedis, startRedis } from '../helpers/redis.js'

const BIG = '123456789012345678901234567890'

const modules = writeModules({
  'adder.mjs': moduleSource(validMembers('Adder')),
  'twice.mjs': `export default {
  name: 'Twice', version: '2.0.0-beta.1', description: 'Doubles an integer of any size.',
  params: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
  result: { type: 'object', required: ['twice', 'kind'], properties: { twice: { type: 'integer' }, kind: { type: 'string' } } },
  run: ({ n }) => ({ twice: typeof n === 'bigint' ? n * 2n : n * 2, kind: typeof n }),
}
`,
  'failing.mjs': moduleSource(validMembers('Failing', "() => { throw new Error('no sum today') }")),
  'spin.mjs': `export default {
  name: 'Spin', version: '1.0.0', description: 'Never ends, and never looks at its signal.',
  params: { type: 'object' }, result: { type: 'object' }, timeoutMs: 500,
  run: () => { for (;;) {} },
}
`,
  'exit.mjs': `export default {
  name: 'Exit', version: '1.0.0', description: 'Ends its thread.',
  params: { type: 'object' }, result: { type: 'object' },
  run: () => { process.exit(3) },
}
`,
  'hog.mjs': `export default {
  name: 'Hog', version: '1.0.0', description: 'Runs out of memory.',
  params: { type: 'object' }, result: { type: 'object' },
  run: () => { const kept = []; for (;;) kept.push(new Array(1e6).fill(kept.length)) },
}
`,
})
after(() => modules.remove())

const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: typeof body === 'string' ? body : JSON.stringify(body),
})

describe('the algorithm routes', () => {
  let server: TestApp
  before(async () => {
    server = await startWith()
  })
  after(() => server.close())

  const invoke = (name: string, body: unknown) =>
    postRaw(`${server.url}/algorithms/${name}/invoke`, json(body).body)

  test('GET /algorithms lists every algorithm, sorted by name, each with the processes taking its jobs', async () => {
    const response = await fetch(`${server.url}/algorithms`)
    assert.equal(response.status, 200)
    const { algorithms } = (await response.json()) as { algorithms: { name: string }[] }
    assert.deepEqual(
      algorithms.map((a) => a.name),
      ['Adder', 'Exit', 'Failing', 'Hog', 'PrimeChecker', 'Spin', 'Twice'],
    )
    // The embedded store's one process takes every job.
    assert.deepEqual(algorithms[0], {
      name: 'Adder',
      version: '1.0.0',
      description: 'Adds two integers.',
      workers: 1,
      versions: [{ version: '1.0.0', default: true, weight: 1, deprecated: false, sunset: null, workers: 1 }],
    })
  })

  test('GET /algorithms/{name} shows its schemas, examples, time limit, bounds and workers; an unknown name is 404', async () => {
    const response = await fetch(`${server.url}/algorithms/Spin`)
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), {
      name: 'Spin',
      version: '1.0.0',
      description: 'Never ends, and never looks at its signal.',
      params: { type: 'object' },
      result: { type: 'object' },
      examples: [],
      timeout_ms: 500,
      limits: {
        max_body_bytes: 1_048_576,
        max_json_values: 10_000,
        max_json_depth: 32,
        max_string_length: 1_048_576,
        max_digits: 4300,
      },
      // The embedded store's one process takes every job.
      workers: 1,
      versions: [{ version: '1.0.0', default: true, weight: 1, deprecated: false, sunset: null, workers: 1 }],
    })
    const adder = (await (await fetch(`${server.url}/algorithms/Adder`)).json()) as Record<string, unknown>
    assert.deepEqual(adder.examples, [{ params: { a: 1, b: 2 } }])
    assert.equal(adder.timeout_ms, null)
    const unknown = await fetch(`${server.url}/algorithms/Nope`)
    assert.equal(unknown.status, 404)
    const { detail } = (await unknown.json()) as { detail: Record<string, unknown> }
    assert.equal(detail.error, 'ALGORITHM_NOT_FOUND')
    assert.deepEqual((detail.details as { available_algorithms: string[] }).available_algorithms, [
      'Adder',
      'Exit',
      'Failing',
      'Hog',
      'PrimeChecker',
      'Spin',
      'Twice',
    ])
  })

  test('POST /algorithms/{name}/invoke answers as /invoke does', async () => {
    const response = await invoke('Adder', { a: 2, b: 40 })
    assert.equal(response.status, 200)
    const body = response.json as Record<string, unknown>
    assert.deepEqual(Object.keys(body), ['request_id', 'status', 'result', 'metadata'])
    assert.equal(body.request_id, response.headers.get('x-request-id'))
    assert.equal(body.status, 'success')
    assert.deepEqual(body.result, { sum: 42 })
    const metadata = body.metadata as Record<string, unknown>
    assert.equal(metadata.algorithm, 'Adder')
    assert.equal(metadata.version, '1.0.0')
    assert.equal(typeof metadata.elapsed_time, 'number')
    const prime = await invoke('PrimeChecker', { number: 97 })
    assert.deepEqual((prime.json as { result: unknown }).result, {
      number: 97,
      is_prime: true,
      factors: [],
      factorization_complete: true,
      algorithm: 'trial_division',
    })
  })

  test('params that fail the schema are 422 with loc into the body', async () => {
    const response = await invoke('Adder', { a: 1.5, b: -1, c: true })
    assert.equal(response.status, 422)
    assert.deepEqual(response.json, {
      detail: [
        { type: 'extra_forbidden', loc: ['body', 'c'], msg: 'Extra inputs are not permitted', input: true },
        { type: 'int_type', loc: ['body', 'a'], msg: 'Input should be a valid integer', input: 1.5 },
        {
          type: 'greater_than_equal',
          loc: ['body', 'b'],
          msg: 'Input should be greater than or equal to 0',
          input: -1,
          ctx: { ge: 0 },
        },
      ],
    })
    const missing = await invoke('Adder', { a: 1 })
    assert.deepEqual(missing.json, {
      detail: [{ type: 'missing', loc: ['body', 'b'], msg: 'Field required', input: { a: 1 } }],
    })
    const notObject = await invoke('Adder', [1, 2])
    assert.equal(notObject.status, 422)
    assert.deepEqual((notObject.json as { detail: { loc: string[] }[] }).detail[0]?.loc, ['body'])
  })

  test('an unknown algorithm is 404 ALGORITHM_NOT_FOUND listing them all', async () => {
    const response = await invoke('Nope', { a: 1 })
    assert.equal(response.status, 404)
    const { detail } = response.json as {
      detail: { error: string; details: { available_algorithms: string[] } }
    }
    assert.equal(detail.error, 'ALGORITHM_NOT_FOUND')
    assert.ok(detail.details.available_algorithms.includes('Twice'))
  })

  test('integers past a double reach run as BigInt, and BigInt results are exact JSON integers', async () => {
    const big = await postRaw(`${server.url}/algorithms/Twice/invoke`, `{"n": ${BIG}}`)
    assert.equal(big.status, 200)
    assert.match(big.text, /"result":\{"twice":246913578024691357802469135780,"kind":"bigint"\}/)
    assert.equal((parseExact(big.text) as { result: { twice: bigint } }).result.twice, BigInt(BIG) * 2n)
    const small = await invoke('Twice', { n: 21 })
    assert.deepEqual((small.json as { result: unknown }).result, { twice: 42, kind: 'number' })
    const tooLong = await postRaw(`${server.url}/algorithms/Twice/invoke`, `{"n": ${'9'.repeat(4301)}}`)
    assert.equal(tooLong.status, 400)
    assert.equal((tooLong.json as { details: { field: string } }).details.field, 'n')
  })

  test("a run that throws is 500 ALGORITHM_ERROR in the algorithm's own words", async () => {
    const response = await invoke('Failing', { a: 1, b: 2 })
    assert.equal(response.status, 500)
    assert.equal(
      (response.json as { message: string }).message,
      "The algorithm 'Failing' failed while running: no sum today",
    )
  })

  test('a run that ignores its signal past its time limit is stopped, and the service goes on', async () => {
    const response = await invoke('Spin', {})
    assert.equal(response.status, 500)
    assert.deepEqual(response.json, {
      error: 'ALGORITHM_ERROR',
      message:
        "The algorithm 'Spin' failed while running: it exceeded its time limit of 0.5 s and was stopped",
      details: null,
      request_id: response.headers.get('x-request-id'),
    })
    // Both threads are free again: two runs at once both finish.
    const [one, two] = await Promise.all([invoke('Adder', { a: 1, b: 1 }), invoke('Adder', { a: 2, b: 2 })])
    assert.deepEqual([one.status, two.status], [200, 200])
  })

  test('a run that ends its thread or runs out of memory fails alone', async () => {
    const exit = await invoke('Exit', {})
    assert.equal(exit.status, 500)
    assert.equal(
      (exit.json as { message: string }).message,
      "The algorithm 'Exit' failed while running: its worker thread stopped",
    )
    const hog = await invoke('Hog', {})
    assert.equal(hog.status, 500)
    assert.match(
      (hog.json as { message: string }).message,
      /^The algorithm 'Hog' failed while running: its worker thread ran out of memory/,
    )
    assert.equal((await invoke('Adder', { a: 1, b: 1 })).status, 200)
    // A thread that ended by itself leaves nothing for a later stopped thread to wait for.
    const spin = await invoke('Spin', {})
    assert.equal(spin.status, 500)
    assert.match((spin.json as { message: string }).message, /exceeded its time limit of 0.5 s/)
  })
})

function startWith(): Promise<TestApp> {
  // The per-thread heap limit keeps the test of running out of memory short.
  return import('../helpers/app.js').then(({ startApp }) =>
    startApp({ algorithms: [modules.dir], threadHeapMb: 64, workerThreads: 2 }),
  )
}

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({ algorithms: [modules.dir], jobTimeoutMs: 60_000 })
  })
  after(() => server.close())

  test('jobs of a user algorithm complete with their result and metadata, BigInts exact', async () => {
    const created = await postRaw(`${server.url}/jobs`, `{"algorithm": "Twice", "params": {"n": ${BIG}}}`)
    assert.equal(created.status, 202)
    const id = (created.json as { job_id: string }).job_id
    await waitForJob(server.url, id)
    const text = await (await fetch(`${server.url}/jobs/${id}`)).text()
    const job = parseExact(text) as {
      status: string
      result: { twice: bigint; kind: string }
      metadata: { algorithm: string; version: string }
    }
    assert.equal(job.status, 'completed')
    assert.equal(job.result.twice, BigInt(BIG) * 2n)
    assert.equal(job.result.kind, 'bigint')
    assert.equal(job.metadata.algorithm, 'Twice')
    assert.equal(job.metadata.version, '2.0.0-beta.1')
  })

  test('params that fail the schema are 422 at loc body.params before anything is stored', async () => {
    const response = await createJob(server.url, { algorithm: 'Adder', params: { a: 1 } })
    assert.equal(response.status, 422)
    assert.deepEqual(response.json, {
      detail: [{ type: 'missing', loc: ['body', 'params', 'b'], msg: 'Field required', input: { a: 1 } }],
    })
    const listed = (await (await fetch(`${server.url}/jobs?algorithm=Adder`)).json()) as { jobs: unknown[] }
    assert.deepEqual(listed.jobs, [])
  })

  test('a job that throws fails in its own words; one past its time limit fails saying so', async () => {
    const failing = await createJob(server.url, { algorithm: 'Failing', params: { a: 1, b: 2 } })
    const spin = await createJob(server.url, { algorithm: 'Spin', params: {} })
    const failed = await waitForJob(server.url, failing.json.job_id as string)
    assert.equal(failed.status, 'failed')
    assert.equal(failed.error, "The algorithm 'Failing' failed while running: no sum today")
    const stopped = await waitForJob(server.url, spin.json.job_id as string)
    assert.equal(stopped.status, 'failed')
    assert.equal(stopped.error, 'The job exceeded the hard time limit of 0.5 s.')
    const adder = await createJob(server.url, { algorithm: 'Adder', params: { a: 3, b: 4 } })
    assert.deepEqual((await waitForJob(server.url, adder.json.job_id as string)).result, { sum: 7 })
  })
})

test('GET /readyz of algoserve worker names the algorithms it runs', { skip: skipWithoutRedis }, async () => {
  const redis = await startRedis()
  const worker = await createService(
    {
      ...defaultConfig(),
      redisUrl: redis.url,
      redisPrefix: freshPrefix(),
      algorithms: [modules.dir],
      workerThreads: 1,
      logLevel: 'silent',
    },
    { role: 'worker' },
  )
  try {
    await worker.app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = worker.app.server.address() as { port: number }
    const body = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { algorithms?: string[] }
    assert.deepEqual(body.algorithms, ['Adder', 'Exit', 'Failing', 'Hog', 'PrimeChecker', 'Spin', 'Twice'])
  } finally {
    await worker.shutdown(0)
    await redis.close()
  }
})

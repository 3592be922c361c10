// ALGOSERVE_PRIME_CHECKER=false: the service serves only its own algorithms, on each job backend.
// PrimeChecker is unknown wherever an algorithm is named, POST /invoke answers 404 ALGORITHM_NOT_FOUND
// (flat, as /invoke's errors are), the document never names it, and the jobs, their list and the
// dashboard work as before.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { defaultConfig } from '../src/config.js'
import { createService } from '../src/service.js'
import { moduleSource, validMembers, writeModules } from './helpers/algorithms.js'
import { type TestApp, tempDataDir } from './helpers/app.js'
import { forEachBackend } from './helpers/backends.js'

const COLLATZ = new URL('../examples/algorithms/collatz.mjs', import.meta.url).pathname

const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
})

forEachBackend((backend) => {
  describe('without PrimeChecker', () => {
    let server: TestApp
    before(async () => {
      server = await backend.start({ primeChecker: false, algorithms: [COLLATZ] })
    })
    after(() => server.close())

    test('POST /invoke answers 404 ALGORITHM_NOT_FOUND, flat, listing the algorithms there are', async () => {
      for (const body of [{ number: 97 }, { anything: true }]) {
        const response = await fetch(`${server.url}/invoke`, json(body))
        assert.equal(response.status, 404)
        const answer = (await response.json()) as Record<string, unknown>
        assert.deepEqual(answer, {
          error: 'ALGORITHM_NOT_FOUND',
          message: "Algorithm 'PrimeChecker' is not known.",
          details: { available_algorithms: ['Collatz'] },
          request_id: response.headers.get('x-request-id'),
        })
      }
    })

    test('PrimeChecker is unknown to /algorithms and /jobs, as any algorithm not served', async () => {
      const list = (await (await fetch(`${server.url}/algorithms`)).json()) as {
        algorithms: { name: string }[]
      }
      assert.deepEqual(
        list.algorithms.map((algorithm) => algorithm.name),
        ['Collatz'],
      )
      const one = await fetch(`${server.url}/algorithms/PrimeChecker`)
      assert.equal(one.status, 404)
      assert.equal(((await one.json()) as { detail: { error: string } }).detail.error, 'ALGORITHM_NOT_FOUND')
      const job = await fetch(
        `${server.url}/jobs`,
        json({ algorithm: 'PrimeChecker', params: { number: 97 } }),
      )
      assert.equal(job.status, 404)
      assert.deepEqual(((await job.json()) as { detail: { details: unknown } }).detail.details, {
        available_algorithms: ['Collatz'],
      })
    })

    test('the document names no PrimeChecker, and has no POST /invoke', async () => {
      const text = await (await fetch(`${server.url}/openapi.json`)).text()
      assert.doesNotMatch(text, /PrimeChecker|PrimeResult|InvokeRequest|InvokeResponse/)
      const document = JSON.parse(text) as {
        info: { description: string }
        paths: Record<string, unknown>
        components: { schemas: Record<string, { oneOf?: { $ref: string }[] }> }
      }
      assert.equal(document.paths['/invoke'], undefined)
      assert.ok(document.paths['/algorithms/Collatz/invoke'])
      assert.match(document.info.description, /^Algorithms over HTTP\.\n\n/)
      // One algorithm still has its own job shapes: the job's result is Collatz's, not PrimeChecker's.
      assert.deepEqual(document.components.schemas.JobStatusResponse?.oneOf, [
        { $ref: '#/components/schemas/Collatz.JobStatusResponse' },
      ])
    })

    test('jobs run, are listed and summed up, and the dashboard and readiness answer', async () => {
      const created = await fetch(`${server.url}/jobs`, json({ algorithm: 'Collatz', params: { n: 27 } }))
      assert.equal(created.status, 202)
      const { job_id: id } = (await created.json()) as { job_id: string }
      const job = (await (await fetch(`${server.url}/jobs/${id}?wait=30`)).json()) as Record<string, unknown>
      assert.equal(job.status, 'completed')
      assert.deepEqual(job.result, { steps: 111, peak: 9232 })
      const listed = (await (await fetch(`${server.url}/jobs`)).json()) as { jobs: { job_id: string }[] }
      assert.ok(listed.jobs.some((item) => item.job_id === id))
      assert.equal((await fetch(`${server.url}/job-summary`)).status, 200)
      assert.equal((await fetch(`${server.url}/dashboard`)).status, 200)
      assert.equal((await fetch(`${server.url}/readyz`)).status, 200)
    })
  })
})

test('without PrimeChecker and without modules of its own, the service does not start', async () => {
  const dataDir = tempDataDir()
  try {
    await assert.rejects(
      createService({ ...defaultConfig(), dataDir, port: 0, logLevel: 'silent', primeChecker: false }),
      /ALGOSERVE_PRIME_CHECKER=false leaves no algorithm to serve/,
    )
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
})

test("a module may not take PrimeChecker's name, served or not", async () => {
  const modules = writeModules({ 'prime.mjs': moduleSource(validMembers('PrimeChecker')) })
  const dataDir = tempDataDir()
  try {
    await assert.rejects(
      createService({
        ...defaultConfig(),
        dataDir,
        port: 0,
        logLevel: 'silent',
        primeChecker: false,
        algorithms: [join(modules.dir, 'prime.mjs')],
      }),
      /the name 'PrimeChecker' is kept for the built-in module/,
    )
  } finally {
    modules.remove()
    rmSync(dataDir, { recursive: true, force: true })
  }
})

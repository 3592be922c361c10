// A share of the workers per algorithm, on both backends: a backlog of 200 slow jobs of one algorithm
// (declaring a concurrency of 1) leaves the other worker thread to another algorithm, whose jobs end
// within a second each while the backlog waits. Real services over HTTP with modules written here.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { type ModuleFolder, moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { until } from '../helpers/time.js'

const SLOW_JOBS = 200
const FAST_JOBS = 5
/** The bound asked of a fast job's wait while the backlog waits. */
const FAST_JOB_MS = 1000

// Sleeps, stopping at once when its signal aborts (cancel, shutdown).
const slow = moduleSource(`
  name: 'Slow',
  version: '1.0.0',
  description: 'Sleeps.',
  params: { type: 'object' },
  result: { type: 'object' },
  concurrency: 1,
  run: (params, { signal }) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({}), 300)
      signal.addEventListener('abort', () => {
        clearTimeout(timer)
        reject(signal.reason)
      }, { once: true })
    }),`)

forEachBackend((backend) => {
  let modules: ModuleFolder
  let app: TestApp

  before(async () => {
    modules = writeModules({ 'slow.mjs': slow, 'fast.mjs': moduleSource(validMembers('Fast')) })
    app = await backend.start({ algorithms: [modules.dir], workerThreads: 2, jobConcurrency: 8 })
  })
  after(async () => {
    await app.close()
    modules.remove()
  })

  const submit = async (algorithm: string, params: Record<string, unknown>) => {
    const created = await createJob(app.url, { algorithm, params })
    assert.equal(created.status, 202)
    return created.json.job_id as string
  }
  const counts = async () =>
    (
      (await (await fetch(`${app.url}/job-summary`)).json()) as {
        counts: Record<'pending' | 'running' | 'completed', number>
      }
    ).counts

  test(`${SLOW_JOBS} slow jobs queued, jobs of another algorithm end within a second each`, async () => {
    for (let i = 0; i < SLOW_JOBS; i++) await submit('Slow', {})
    await until(async () => (await counts()).running >= 1, 10_000, 'a slow job running')
    for (let i = 0; i < FAST_JOBS; i++) {
      const start = Date.now()
      const job = await waitForJob(app.url, await submit('Fast', { a: i, b: 1 }))
      const waited = Date.now() - start
      assert.equal(job.status, 'completed')
      assert.deepEqual(job.result, { sum: i + 1 })
      assert.ok(waited < FAST_JOB_MS, `fast job ${i} took ${waited} ms behind the backlog`)
    }
    const { pending, running, completed } = await counts()
    assert.ok(running <= 1, `at most the declared concurrency of slow jobs ran at once: ${running}`)
    assert.ok(pending > SLOW_JOBS / 2, `the backlog still waits: ${pending} pending, ${completed} completed`)
  })
})

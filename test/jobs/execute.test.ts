// A job is `running` only once its algorithm has begun: taken by a process that has no free thread or
// process of its algorithm, it waits there and reads `pending`, with no started_at. A program of two
// instances (the Stepping fixture), three jobs held by go files: the third waits while both instances
// are busy, and begins once one is free. On both backends, through HTTP.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, type JobBody, waitForJob } from '../helpers/jobs.js'
import { until } from '../helpers/time.js'

const STEPPING = fileURLToPath(new URL('../fixtures/stepping-process', import.meta.url))

/** The job gauges' samples of one algorithm. */
async function gauges(url: string, algorithm: string): Promise<{ waiting: number; running: number }> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const value = (name: string) =>
    Number(new RegExp(`^${name}\\{algorithm="${algorithm}"\\} (\\S+)$`, 'm').exec(text)?.[1])
  return { waiting: value('jobs_waiting'), running: value('jobs_running') }
}

forEachBackend((backend) => {
  let server: TestApp
  let goFiles: string
  before(async () => {
    goFiles = mkdtempSync(join(tmpdir(), 'algoserve-go-'))
    // Room for more jobs at once than the program has instances.
    server = await backend.start({ algorithms: [STEPPING], jobConcurrency: 4 })
  })
  after(async () => {
    await server.close()
    rmSync(goFiles, { recursive: true, force: true })
  })

  const read = async (id: string) => (await (await fetch(`${server.url}/jobs/${id}`)).json()) as JobBody

  test('with both instances busy, a third job reads pending until one is free', async () => {
    const held = await Promise.all(
      [0, 1, 2].map(async () => {
        const goFile = join(goFiles, randomUUID())
        const created = await createJob(server.url, {
          algorithm: 'Stepping',
          params: { steps: 1, step_ms: 0, go_file: goFile },
        })
        assert.equal(created.status, 202)
        return { id: String(created.json.job_id), go: () => writeFileSync(goFile, '') }
      }),
    )
    // Two run, one on each instance; which two is the backend's order.
    let running: string[] = []
    await until(async () => {
      const jobs = await Promise.all(held.map(({ id }) => read(id)))
      running = jobs.filter((job) => job.status === 'running').map((job) => job.job_id)
      return running.length === 2
    }, 20_000)
    const third = held.find(({ id }) => !running.includes(id)) as (typeof held)[number]
    const first = held.find(({ id }) => id === running[0]) as (typeof held)[number]
    const second = held.find(({ id }) => id === running[1]) as (typeof held)[number]
    for (const id of running) assert.notEqual((await read(id)).started_at, null)
    // Taken (on Redis its worker's active list counts it as running), and waiting for an instance.
    if (backend.name === 'redis')
      await until(async () => (await gauges(server.url, 'Stepping')).running === 3, 10_000)
    else assert.deepEqual(await gauges(server.url, 'Stepping'), { waiting: 1, running: 2 })
    const waiting = await read(third.id)
    assert.equal(waiting.status, 'pending', JSON.stringify(waiting))
    assert.equal(waiting.started_at, null)

    const freed = Date.now()
    first.go()
    await waitForJob(server.url, first.id)
    const begun = await waitForJob(server.url, third.id, (job) => job.status === 'running')
    assert.ok(
      Date.parse(begun.started_at as string) >= freed,
      `it began once an instance was free: ${begun.started_at} < ${new Date(freed).toISOString()}`,
    )
    second.go()
    third.go()
    for (const { id } of held) assert.equal((await waitForJob(server.url, id)).status, 'completed')
    const ended = await read(third.id)
    assert.ok(Date.parse(ended.started_at as string) >= freed)
    await until(async () => {
      const idle = await gauges(server.url, 'Stepping')
      return idle.waiting === 0 && idle.running === 0
    }, 10_000)
  })
})

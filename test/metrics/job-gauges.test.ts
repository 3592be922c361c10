// The gauges of jobs waiting and running by algorithm, read from the job backend at each scrape; on every
// backend. Every algorithm loaded has its series, at 0 while none of its jobs waits or runs.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { RSA_100 } from '../helpers/numbers.js'
import { until } from '../helpers/time.js'

async function gauges(
  url: string,
  algorithm = 'PrimeChecker',
): Promise<{ waiting: number; running: number }> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const value = (name: string) =>
    Number(new RegExp(`^${name}\\{algorithm="${algorithm}"\\} (\\S+)$`, 'm').exec(text)?.[1])
  assert.match(text, /^# TYPE jobs_waiting gauge$/m)
  assert.match(text, /^# TYPE jobs_running gauge$/m)
  return { waiting: value('jobs_waiting'), running: value('jobs_running') }
}

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({ jobConcurrency: 1, jobFactorBudgetMs: 700 })
  })
  after(() => server.close())

  test('jobs_waiting and jobs_running follow the jobs, back to 0 when they are done', async () => {
    assert.deepEqual(await gauges(server.url), { waiting: 0, running: 0 })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })).json
          .job_id as string,
      )
    }
    await waitForJob(server.url, ids[0] as string, (job) => job.status === 'running')
    const busy = await gauges(server.url)
    assert.equal(busy.running, 1, JSON.stringify(busy))
    assert.equal(busy.waiting, 2, JSON.stringify(busy))
    for (const id of ids) await waitForJob(server.url, id)
    await until(async () => {
      const idle = await gauges(server.url)
      return idle.waiting === 0 && idle.running === 0
    }, 5000)
  })
})

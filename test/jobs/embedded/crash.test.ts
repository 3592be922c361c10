// Nothing is lost: the real service in a child process is killed (SIGKILL) or stopped (SIGTERM) while
// jobs run, restarted on the same data directory, and every job completes once, webhook delivered.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { tempDataDir } from '../../helpers/app.js'
import { listening, start } from '../../helpers/child.js'
import { createJob, type JobBody } from '../../helpers/jobs.js'
import { isPrimeByTrial, RSA_100 } from '../../helpers/numbers.js'
import { type Receiver, startReceiver } from '../../helpers/receiver.js'
import { sleep, until } from '../../helpers/time.js'

let receiver: Receiver
before(async () => {
  receiver = await startReceiver(() => 200)
})
after(() => receiver.close())

const serve = (dataDir: string, extra: string[] = []) =>
  start([
    'serve',
    '--data-dir',
    dataDir,
    '--port',
    '0',
    '--worker-threads',
    '2',
    '--job-factor-budget-ms',
    '1500',
    '--webhook-allow-private',
    'true',
    ...extra,
  ])

async function readJobs(url: string, ids: string[]): Promise<Map<string, JobBody>> {
  const jobs = new Map<string, JobBody>()
  for (const id of ids) {
    const response = await fetch(`${url}/jobs/${id}`)
    assert.equal(response.status, 200, `job ${id} is readable`)
    jobs.set(id, (await response.json()) as JobBody)
  }
  return jobs
}

async function untilAll(url: string, ids: string[], done: (job: JobBody) => boolean, timeoutMs = 30_000) {
  let jobs = new Map<string, JobBody>()
  const all = async () => {
    jobs = await readJobs(url, ids)
    return [...jobs.values()].every(done) && jobs
  }
  return until(all, timeoutMs, () => `every job got there: ${JSON.stringify([...jobs.values()])}`, 100)
}

const finished = (job: JobBody) => job.status === 'completed' || job.status === 'failed'

test('SIGKILL while jobs run: after a restart every job completes exactly once, with its webhook', {
  timeout: 120_000,
}, async (t) => {
  const dataDir = tempDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  // A longer budget than the other test's: the long jobs must still run after the 42 POSTs, which
  // take over a second on a loaded machine.
  const first = serve(dataDir, ['--job-concurrency', '3', '--job-factor-budget-ms', '4000'])
  const url = await listening(first)

  // Small jobs, two that run for their whole 4 s budget, and small ones again: with three job
  // slots, the small ones go on beside the long ones.
  const ids: string[] = []
  const long: string[] = []
  const expectedPrime = new Map<string, boolean>()
  for (let i = 0; i < 42; i++) {
    const number = i === 20 || i === 21 ? RSA_100 : 1_000_003 + 2 * i
    const created = await createJob(url, {
      algorithm: 'PrimeChecker',
      params: { number },
      webhook: receiver.url,
    })
    assert.equal(created.status, 202)
    const id = created.json.job_id as string
    ids.push(id)
    if (typeof number === 'string') long.push(id)
    else expectedPrime.set(id, isPrimeByTrial(number))
  }
  const running = await untilAll(url, long, (job) => job.status === 'running')
  assert.equal(running.size, 2)
  const beforeKill = await readJobs(url, ids)
  first.process.kill('SIGKILL')
  assert.equal(await first.exit, null, 'killed, not exited')
  const killedAt = Date.now()

  const completedBefore = [...beforeKill.values()].filter((job) => job.status === 'completed')
  assert.ok(completedBefore.length > 0, 'some jobs had completed before the kill')
  const runningBefore = [...beforeKill.values()].filter((job) => job.status === 'running')
  assert.ok(runningBefore.length >= 2, 'some jobs were running at the kill')

  const second = serve(dataDir, ['--job-concurrency', '3'])
  t.after(() => second.process.kill('SIGKILL'))
  const url2 = await listening(second)
  const jobs = await untilAll(url2, ids, finished)
  for (const [id, job] of jobs) {
    assert.equal(job.status, 'completed', `${id}: ${job.error}`)
    const seen = beforeKill.get(id) as JobBody
    if (seen.status === 'completed') {
      // Completed once: the restart neither reran it nor changed what the client saw.
      assert.equal(job.completed_at, seen.completed_at)
      assert.deepEqual(job.result, seen.result)
    } else {
      assert.ok(Date.parse(job.completed_at as string) >= killedAt - 5, `${id} finished after the restart`)
    }
    if (expectedPrime.has(id)) assert.equal(job.result?.is_prime, expectedPrime.get(id), id)
  }
  for (const id of long)
    assert.equal(jobs.get(id)?.result?.factorization_complete, false, 'RSA-100 ran again')

  // Every job's webhook arrived; one sent again after the kill carries the same webhook-id.
  await receiver.waitFor(ids.length, 30_000)
  await sleep(300)
  const byJob = new Map<string, Set<string>>()
  for (const delivery of receiver.received) {
    const payload = JSON.parse(delivery.body) as JobBody
    const job = jobs.get(payload.job_id)
    if (job === undefined) continue
    assert.equal(payload.status, 'completed')
    assert.equal(payload.completed_at, job.completed_at, 'the webhook tells the completion the client sees')
    const webhookIds = byJob.get(payload.job_id) ?? new Set()
    webhookIds.add(String(delivery.headers['webhook-id']))
    byJob.set(payload.job_id, webhookIds)
  }
  assert.deepEqual([...byJob.keys()].sort(), [...ids].sort(), 'a webhook for every job')
  for (const [id, webhookIds] of byJob) assert.equal(webhookIds.size, 1, `one webhook-id for ${id}`)

  second.process.kill('SIGTERM')
  assert.equal(await second.exit, 0, second.output())
})

test('SIGTERM: a job still running after the grace period goes back to pending and runs after restart', {
  timeout: 60_000,
}, async (t) => {
  const dataDir = tempDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  // No drain delay: this test times the grace period alone.
  const first = serve(dataDir, [
    '--job-concurrency',
    '1',
    '--shutdown-grace-ms',
    '300',
    '--drain-delay-ms',
    '0',
  ])
  const url = await listening(first)
  const long = (await createJob(url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })).json
    .job_id as string
  const waiting = (await createJob(url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })).json
    .job_id as string
  await untilAll(url, [long], (job) => job.status === 'running')
  const stoppedAt = Date.now()
  first.process.kill('SIGTERM')
  assert.equal(await first.exit, 0, first.output())
  assert.ok(Date.now() - stoppedAt < 1400, 'the grace period, not the job, set the shutdown time')
  assert.match(first.output(), /shutdown complete/)

  const second = serve(dataDir)
  t.after(() => second.process.kill('SIGKILL'))
  const url2 = await listening(second)
  const before = await readJobs(url2, [long, waiting])
  assert.ok(
    [...before.values()].every((job) => job.status === 'pending' || job.status === 'running'),
    'neither job failed or was lost at the shutdown',
  )
  const jobs = await untilAll(url2, [long, waiting], finished)
  for (const job of jobs.values()) assert.equal(job.status, 'completed')
  second.process.kill('SIGTERM')
  assert.equal(await second.exit, 0)
})

// The JobBackend seam itself, on every backend through one factory: what a backend must do whatever
// keeps its jobs (submit, read, cancel, list, summary, deliveries, expire), with a run function of the
// test's own standing in for the worker pool, and a real webhook receiver.
import assert from 'node:assert/strict'
import { after, afterEach, before, test } from 'node:test'
import { setImmediate, setTimeout as sleep } from 'node:timers/promises'
import {
  CANCEL_REASON,
  DuplicateJobIdError,
  IdempotencyKeyReusedError,
  JOB_CANCELLED,
  StoreFullError,
} from '../../src/errors.js'
import type { Consumer, RunJob } from '../../src/jobs/backend.js'
import type { JobRecord, NewJob } from '../../src/jobs/job.js'
import { PROGRESS_WRITE_INTERVAL_MS } from '../../src/jobs/progress.js'
import { WebhookSender } from '../../src/webhooks/sender.js'
import {
  forEachJobBackend,
  type OpenedBackend,
  SUITE_ALGORITHMS,
  SUITE_LOADED,
  silentLog,
} from '../helpers/backends.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { until } from '../helpers/time.js'

let serial = 0
/** A new job: ids differ in every test, and creation times go up. */
function newJob(extra: Partial<NewJob> = {}): NewJob {
  serial++
  return {
    id: `c0ffee${String(serial).padStart(6, '0')}`,
    algorithm: 'Echo',
    version: '1.0.0',
    params: `{"n":${serial}}`,
    webhook: null,
    cheap: true,
    createdAt: Date.now() + serial,
    ...extra,
  }
}

/** Completes each job with its params as its result; a job whose params say "hold" waits for its signal. */
const echo: RunJob = async (job, signal) => {
  if (job.params.includes('"hold"')) {
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
    if (signal.reason === CANCEL_REASON) return { status: 'failed', error: JOB_CANCELLED }
    throw signal.reason
  }
  return { status: 'completed', result: job.params, metadata: '{"by":"echo"}' }
}

/** A promise and what resolves it. */
function gate(): [Promise<void>, () => void] {
  let open = () => {}
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return [promise, open]
}

const ended = (job: JobRecord | null) => job?.status === 'completed' || job?.status === 'failed'

forEachJobBackend((factory) => {
  let opened: OpenedBackend
  const consumers: Consumer[] = []
  let receiver: Receiver
  const sender = new WebhookSender({
    userAgent: 'conformance',
    secret: null,
    allowPrivate: true,
    timeoutMs: 2000,
  })
  before(async () => {
    receiver = await startReceiver((n) => (n === 0 ? 500 : 200))
  })
  after(async () => {
    await sender.close()
    await receiver.close()
  })
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((consumer) => consumer.stop(0)))
    await opened?.close()
  })
  const open = async (settings = {}) => {
    opened = await factory.open(settings)
    return opened.backend
  }
  const run = () => {
    consumers.push(
      opened.backend.consumeJobs(echo, {
        concurrency: 2,
        algorithms: SUITE_ALGORITHMS,
        loaded: SUITE_LOADED,
      }),
    )
  }
  const deliver = () => {
    const options = { maxInFlight: 16, onAttempt: () => {}, log: silentLog }
    consumers.push(opened.backend.consumeDeliveries((m, s) => sender.send(m, s), options))
  }
  const endOf = (id: string) =>
    until(async () => {
      const job = await opened.backend.read(id, Date.now())
      return ended(job) && (job as JobRecord)
    }, 10_000)

  test('a submitted job reads back pending, exactly as given; an unknown id reads null', async () => {
    const backend = await open()
    const job = newJob({ params: '{"n":18446744073709551617}', webhook: 'http://127.0.0.1:9/hook' })
    assert.deepEqual(await backend.submit(job), { id: job.id, createdAt: job.createdAt, replayed: false })
    const read = await backend.read(job.id, Date.now())
    assert.deepEqual(
      { ...read, runs: undefined },
      {
        ...job,
        status: 'pending',
        startedAt: null,
        completedAt: null,
        result: null,
        error: null,
        metadata: null,
        runs: undefined,
        lostRuns: 0,
        progress: null,
      },
    )
    assert.equal(await backend.read('0123456789ab', Date.now()), null)
  })

  test('a consumed job completes with its result, counted once and told to listeners of ends', async () => {
    const backend = await open()
    const told: string[] = []
    await backend.onEnded((id) => told.push(id))
    const job = newJob()
    await backend.submit(job)
    run()
    const done = await endOf(job.id)
    assert.equal(done.status, 'completed')
    assert.equal(done.result, job.params)
    assert.equal(done.metadata, '{"by":"echo"}')
    assert.ok((done.startedAt as number) <= (done.completedAt as number))
    await until(() => told.includes(job.id), 5000, 'the end told')
    await until(() => opened.ends.length > 0, 5000, 'the end counted')
    assert.deepEqual(
      opened.ends.map(({ algorithm, status }) => [algorithm, status]),
      [['Echo', 'completed']],
    )
  })

  test("a running job's progress: read back while it runs, written at most once an interval, heard by listeners of changes, gone at its end", async () => {
    const backend = await open()
    const changes: string[] = []
    await backend.onChanged((id) => changes.push(id))
    const [burstMay, letBurst] = gate()
    const [endMay, letEnd] = gate()
    let burstMs = 0
    const reporting: RunJob = async (job, _signal, progress) => {
      progress(0.25, 'a quarter')
      await burstMay
      const start = performance.now()
      for (let i = 0; i < 2000; i++) {
        progress(i / 2000, `step ${i}`)
        if (i % 20 === 0) await sleep(1)
      }
      progress(0.9, 'the last')
      progress(Number.NaN, 'not a fraction: ignored')
      burstMs = performance.now() - start
      await endMay
      return { status: 'completed', result: job.params, metadata: '{}' }
    }
    // A failed check must not leave the run waiting: the suite's clean-up waits for it.
    try {
      consumers.push(
        backend.consumeJobs(reporting, {
          concurrency: 2,
          algorithms: SUITE_ALGORITHMS,
          loaded: SUITE_LOADED,
        }),
      )
      const job = newJob()
      await backend.submit(job)
      const read = async () => (await backend.read(job.id, Date.now())) as JobRecord
      await until(async () => (await read()).progress !== null, 10_000, 'the first progress stored')
      assert.equal((await read()).status, 'running')
      assert.deepEqual((await read()).progress, { fraction: 0.25, message: 'a quarter', seq: 1 })
      await until(() => changes.includes(job.id), 5000, 'the change heard')
      const heard = changes.length
      letBurst()
      await until(
        async () => (await read()).progress?.message === 'the last',
        10_000,
        'the last progress stored',
      )
      const last = (await read()).progress
      assert.equal(last?.fraction, 0.9)
      // 2,001 reports: the first write of the burst, one each interval, and the last.
      const most = 1 + 1 + Math.ceil(burstMs / PROGRESS_WRITE_INTERVAL_MS) + 1
      assert.ok(
        (last?.seq as number) >= 2 && (last?.seq as number) <= most,
        `${last?.seq} writes in ${burstMs} ms`,
      )
      assert.ok(changes.length > heard, 'the progress heard')
      letEnd()
      const done = await endOf(job.id)
      assert.equal(done.status, 'completed')
      assert.equal(done.progress, null)
    } finally {
      letBurst()
      letEnd()
    }
  })

  test('reads racing the runs: a running job always has its start, an ended one its end and result', async () => {
    const backend = await open()
    const jobs = Array.from({ length: 300 }, () => newJob())
    for (const job of jobs) await backend.submit(job)
    run()
    const seen = new Set<string>()
    let reads = 0
    // Every job read again and again while the consumer takes and ends them.
    await Promise.all(
      jobs.map(async (job) => {
        for (;;) {
          // A read of the embedded store never waits: each loop lets the consumer's turn come.
          await setImmediate()
          const read = await backend.read(job.id, Date.now())
          reads++
          if (read === null) throw new Error(`${job.id} read null`)
          if (read.status === 'running' && read.startedAt === null)
            seen.add(`running without a start: ${job.id}`)
          if (ended(read)) {
            if (read.completedAt === null) seen.add(`ended without an end: ${job.id}`)
            if (read.status === 'completed' && read.result === null)
              seen.add(`completed without a result: ${job.id}`)
            return
          }
        }
      }),
    )
    assert.deepEqual([...seen], [], `${reads} reads`)
  })

  test('an Idempotency-Key gives the same job to the same request, and refuses another request', async () => {
    const backend = await open()
    const first = newJob()
    const claim = { key: 'key-1', fingerprint: 'f1' }
    await backend.submit(first, claim)
    const again = await backend.submit(newJob(), claim)
    assert.deepEqual(again, { id: first.id, createdAt: first.createdAt, replayed: true })
    await assert.rejects(
      backend.submit(newJob(), { key: 'key-1', fingerprint: 'f2' }),
      IdempotencyKeyReusedError,
    )
  })

  test('a taken id and a full store are refused with their errors', async () => {
    const backend = await open({ maxPending: 2 })
    const job = newJob()
    await backend.submit(job)
    await assert.rejects(backend.submit({ ...job, createdAt: job.createdAt + 1 }), DuplicateJobIdError)
    await backend.submit(newJob())
    await assert.rejects(backend.submit(newJob()), StoreFullError)
    const counts = await backend.counts()
    assert.deepEqual([counts.waiting, counts.running], [2, 0])
    assert.deepEqual(counts.byAlgorithm.get('Echo'), { waiting: 2, running: 0 })
    assert.equal(counts.byAlgorithm.get('Other')?.waiting ?? 0, 0)
  })

  test('a pending job cancelled fails at once as cancelled, counted as a failed end; a second cancel finds it finished', async () => {
    const backend = await open()
    const job = newJob()
    await backend.submit(job)
    const cancelled = await backend.cancel(job.id, Date.now())
    assert.equal(cancelled.kind, 'cancelled')
    const read = await backend.read(job.id, Date.now())
    assert.deepEqual([read?.status, read?.error, read?.result], ['failed', JOB_CANCELLED, null])
    assert.equal((await backend.cancel(job.id, Date.now())).kind, 'finished')
    assert.equal((await backend.cancel('0123456789ab', Date.now())).kind, 'not_found')
    await until(() => opened.ends.length > 0, 5000, 'the end counted')
    assert.deepEqual(
      opened.ends.map(({ status }) => status),
      ['failed'],
    )
  })

  test('a running job cancelled has its run aborted and ends cancelled', async () => {
    const backend = await open()
    run()
    const job = newJob({ params: '{"hold":true}' })
    await backend.submit(job)
    await until(async () => (await backend.read(job.id, Date.now()))?.status === 'running', 10_000)
    const result = await backend.cancel(job.id, Date.now())
    assert.equal(result.kind, 'cancelled')
    assert.equal(result.kind === 'cancelled' && result.job.error, JOB_CANCELLED)
    assert.equal((await backend.read(job.id, Date.now()))?.status, 'failed')
  })

  test('a completed job cannot be cancelled: the cancel says it had finished', async () => {
    const backend = await open()
    run()
    const job = newJob()
    await backend.submit(job)
    await endOf(job.id)
    const result = await backend.cancel(job.id, Date.now())
    assert.equal(result.kind, 'finished')
    assert.equal(result.kind === 'finished' && result.job.status, 'completed')
  })

  test('listing: newest first, by pages that follow each other, filtered by status and algorithm', async () => {
    const backend = await open()
    const jobs = [
      newJob(),
      newJob({ algorithm: 'Other' }),
      newJob(),
      newJob(),
      newJob({ algorithm: 'Other' }),
    ]
    for (const job of jobs) await backend.submit(job)
    await backend.cancel(jobs[2]?.id as string, Date.now())
    const newest = jobs.map((job) => job.id).reverse()
    const first = await backend.list({ status: null, algorithm: null, limit: 2, cursor: null }, Date.now())
    assert.deepEqual(
      first.jobs.map((job) => job.id),
      newest.slice(0, 2),
    )
    const rest = await backend.list(
      { status: null, algorithm: null, limit: 10, cursor: first.next },
      Date.now(),
    )
    assert.deepEqual(
      rest.jobs.map((job) => job.id),
      newest.slice(2),
    )
    assert.equal(rest.next, null)
    const failed = await backend.list(
      { status: 'failed', algorithm: null, limit: 10, cursor: null },
      Date.now(),
    )
    assert.deepEqual(
      failed.jobs.map((job) => job.id),
      [jobs[2]?.id],
    )
    const other = await backend.list(
      { status: 'pending', algorithm: 'Other', limit: 10, cursor: null },
      Date.now(),
    )
    assert.deepEqual(
      other.jobs.map((job) => job.id),
      [jobs[4]?.id, jobs[1]?.id],
    )
  })

  test('the summary counts jobs by state, and the ends of the last minutes with their latencies', async () => {
    const backend = await open()
    const done = [newJob(), newJob()]
    for (const job of done) await backend.submit(job)
    run()
    for (const job of done) await endOf(job.id)
    await consumers.splice(0)[0]?.stop(0)
    const cancelled = newJob()
    await backend.submit(cancelled)
    await backend.cancel(cancelled.id, Date.now())
    await backend.submit(newJob())
    // Summed over the minutes shown: the ends may fall on both sides of a minute's turn.
    const total = (ended: { completed: number; failed: number; latency: number[] }[]) => ({
      completed: ended.reduce((sum, m) => sum + m.completed, 0),
      failed: ended.reduce((sum, m) => sum + m.failed, 0),
      latencies: ended.reduce((sum, m) => sum + m.latency.reduce((a, n) => a + n, 0), 0),
    })
    const summary = await until(async () => {
      const now = await backend.summary(Date.now())
      return total(now.ended).latencies === 3 && now
    }, 5000)
    assert.deepEqual(summary.counts, { pending: 1, running: 0, completed: 2, failed: 1 })
    assert.equal(summary.ended.length, 15)
    assert.deepEqual(
      total(summary.ended),
      { completed: 2, failed: 1, latencies: 3 },
      'every end counted, with its latency',
    )
  })

  test("deliveries: none without a webhook, waiting before the first attempt, then each attempt's record until delivered", async () => {
    const backend = await open()
    const quiet = newJob()
    await backend.submit(quiet)
    assert.deepEqual(await backend.deliveries(quiet.id, Date.now()), {
      jobId: quiet.id,
      url: null,
      state: 'none',
      attempts: [],
    })
    assert.equal(await backend.deliveries('0123456789ab', Date.now()), null)
    const hooked = newJob({ webhook: receiver.url })
    await backend.submit(hooked)
    const waiting = await backend.deliveries(hooked.id, Date.now())
    assert.deepEqual([waiting?.url, waiting?.state, waiting?.attempts], [receiver.url, 'waiting', []])
    run()
    deliver()
    const history = await until(async () => {
      const now = await backend.deliveries(hooked.id, Date.now())
      return now?.state === 'delivered' && now
    }, 10_000)
    assert.deepEqual(
      history.attempts.map((a) => [a.attempt, a.statusCode, a.error, a.nextAttemptAt === null]),
      [
        [1, 500, 'the receiver answered 500', false],
        [2, 200, null, true],
      ],
    )
    const [sent] = receiver.received
    assert.equal(JSON.parse(sent?.body ?? '{}').job_id, hooked.id)
  })

  test('a finished job expires after the retention: it reads null, and a sweep removes it', async () => {
    const backend = await open({ ttlMs: 1000 })
    const job = newJob()
    await backend.submit(job)
    const pending = newJob()
    run()
    await endOf(job.id)
    await consumers.splice(0)[0]?.stop(0)
    await backend.submit(pending)
    await until(async () => (await backend.read(job.id, Date.now())) === null, 5000, 'the job expired')
    const removed = await until(async () => (await backend.expire(Date.now())) || undefined, 5000)
    assert.equal(removed, 1)
    assert.equal((await backend.read(pending.id, Date.now() + 3_600_000))?.status, 'pending')
    const listed = await backend.list({ status: null, algorithm: null, limit: 10, cursor: null }, Date.now())
    assert.deepEqual(
      listed.jobs.map((j) => j.id),
      [pending.id],
    )
  })
})

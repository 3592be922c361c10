// The embedded store on real SQLite files: schema versions, the lock, exact numbers, recovery of what a
// dead process left, order, capacity, retention and deliveries; on every SQLite binding this Node can use.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, test } from 'node:test'
import { StoreFullError, StoreUnavailableError } from '../../../src/errors.js'
import { webhookDelivery } from '../../../src/jobs/embedded/dispatcher.js'
import { type DriverName, openConnection, usableDrivers } from '../../../src/jobs/embedded/sqlite-driver.js'
import { DATABASE_FILE, SqliteJobStore } from '../../../src/jobs/embedded/sqlite-store.js'
import { tempDataDir } from '../../helpers/app.js'

const dirs: string[] = []
const stores: SqliteJobStore[] = []
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()))
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function open(
  driver: DriverName,
  dataDir: string,
  options: { ttlMs?: number; maxPending?: number } = {},
): SqliteJobStore {
  const store = SqliteJobStore.open({
    driver,
    dataDir,
    ttlMs: options.ttlMs ?? 60_000,
    maxPending: options.maxPending ?? 100,
    makeDelivery: webhookDelivery,
  })
  stores.push(store)
  return store
}

function freshDir(): string {
  const dir = tempDataDir()
  dirs.push(dir)
  return dir
}

const job = (
  id: string,
  extra: { webhook?: string; params?: string; cheap?: boolean; algorithm?: string } = {},
) => ({
  id,
  algorithm: extra.algorithm ?? 'PrimeChecker',
  version: '1.0.0',
  params: extra.params ?? '{"number":7}',
  webhook: extra.webhook ?? null,
  cheap: extra.cheap ?? true,
  createdAt: Date.now(),
})

const up = (jobs: number, heavy = jobs) => ({ jobs, heavy })

/** One test per driver. */
function each(name: string, body: (driver: DriverName) => void | Promise<void>): void {
  for (const driver of usableDrivers()) test(`${name} (${driver})`, () => body(driver))
}

each('the schema is versioned; a newer one is refused, naming the versions', async (driver) => {
  const dir = freshDir()
  await open(driver, dir).close()
  const db = openConnection(join(dir, DATABASE_FILE), { driver })
  assert.equal((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, 4)
  assert.equal((db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode, 'wal')
  db.exec('PRAGMA user_version = 99')
  db.close()
  assert.throws(
    () => open(driver, dir),
    /schema version 99, newer than this version of algoserve knows \(4\)/,
  )
})

each('one process per data directory: a second store on it is refused while the first is open', (driver) => {
  const dir = freshDir()
  open(driver, dir)
  assert.throws(() => open(driver, dir), /in use by another process/)
})

each('numbers are stored as exact decimal text, and survive reopening', async (driver) => {
  const dir = freshDir()
  const store = open(driver, dir)
  const big = `{"number":${'9'.repeat(4300)}}`
  await store.submit(job('aaaaaaaaaaaa', { params: big }))
  const [claimed] = await store.claim(up(1), Date.now())
  const result = '{"number":18446744073709551617,"factors":[274177,67280421310721]}'
  await store.finish({
    id: 'aaaaaaaaaaaa',
    run: claimed?.runs as number,
    completedAt: Date.now(),
    outcome: { status: 'completed', result, metadata: '{"elapsed_time":0.5}' },
  })
  await store.close()
  const db = openConnection(join(dir, DATABASE_FILE), { driver, readOnly: true })
  const row = db.prepare('SELECT typeof(params) AS p, typeof(result) AS r, params, result FROM jobs').get()
  db.close()
  assert.deepEqual({ ...(row as object) }, { p: 'text', r: 'text', params: big, result })
  const again = open(driver, dir)
  assert.equal((await again.read('aaaaaaaaaaaa', Date.now()))?.result, result)
})

each('pending jobs are claimed oldest first, and a stale run cannot end a job', async (driver) => {
  const store = open(driver, freshDir())
  for (const id of ['000000000003', '000000000001', '000000000002']) await store.submit(job(id))
  assert.equal((await store.counts()).waiting, 3)
  const claimed = await store.claim(up(2), Date.now())
  assert.deepEqual(
    claimed.map((j) => j.id),
    ['000000000003', '000000000001'],
    'creation order, not id order',
  )
  assert.equal((await store.counts()).waiting, 1)
  const first = claimed[0]
  assert.ok(first)
  await store.release(first.id, first.runs)
  assert.equal((await store.read(first.id, Date.now()))?.startedAt, null)
  const [again] = await store.claim(up(1), Date.now())
  assert.equal(again?.id, first.id, 'a released job goes back to its place in line')
  const stale = await store.finish({
    id: first.id,
    run: first.runs,
    completedAt: Date.now(),
    outcome: { status: 'failed', error: 'stale' },
  })
  assert.equal(stale, false)
  assert.equal((await store.read(first.id, Date.now()))?.status, 'running')
})

each('a claim stops at the first job needing a thread once the threads are taken', async (driver) => {
  const store = open(driver, freshDir())
  await store.submit(job('000000000001', { cheap: false }))
  await store.submit(job('000000000002'))
  await store.submit(job('000000000003', { cheap: false }))
  await store.submit(job('000000000004'))
  const ids = async (jobs: number, heavy: number) =>
    (await store.claim({ jobs, heavy }, Date.now())).map((j) => j.id)
  assert.deepEqual(await ids(10, 1), ['000000000001', '000000000002'], 'creation order: 4 waits behind 3')
  assert.deepEqual(await ids(10, 0), [])
  assert.deepEqual(await ids(1, 1), ['000000000003'])
  assert.deepEqual(await ids(10, 0), ['000000000004'])
})

each(
  'a claim passes over the jobs of an algorithm whose room is taken, in one claim or across',
  async (driver) => {
    const store = open(driver, freshDir())
    for (let i = 1; i <= 4; i++)
      await store.submit(job(`00000000000${i}`, { algorithm: 'Slow', cheap: false }))
    await store.submit(job('000000000005', { algorithm: 'Fast', cheap: false }))
    await store.submit(job('000000000006', { algorithm: 'Slow', cheap: false }))
    const ids = async (jobs: number, room: number) =>
      (await store.claim({ jobs, heavy: 10, room: new Map([['Slow', room]]) }, Date.now())).map((j) => j.id)
    // Two rows read, both Slow, room for one: the Fast job behind them is read next.
    assert.deepEqual(await ids(2, 1), ['000000000001', '000000000005'])
    assert.deepEqual(await ids(10, 0), [])
    assert.deepEqual(await ids(10, 2), ['000000000002', '000000000003'])
  },
)

each('capacity: creating beyond max pending throws StoreFullError until one is claimed', async (driver) => {
  const store = open(driver, freshDir(), { maxPending: 2 })
  await store.submit(job('000000000001'))
  await store.submit(job('000000000002'))
  await assert.rejects(store.submit(job('000000000003')), StoreFullError)
  await store.claim(up(1), Date.now())
  await store.submit(job('000000000003'))
})

each(
  'writes made together are committed together; one refused leaves the others, and a close commits them',
  async (driver) => {
    const dir = freshDir()
    let store = open(driver, dir, { maxPending: 3 })
    await store.submit(job('000000000001'))
    const made = await Promise.allSettled([
      store.submit(job('000000000001')),
      store.submit(job('000000000002')),
      store.claim(up(1), Date.now()),
      store.submit(job('000000000003')),
      store.submit(job('000000000004')),
      store.submit(job('000000000005')),
    ])
    assert.deepEqual(
      made.map((outcome) => (outcome.status === 'fulfilled' ? 'stored' : outcome.reason.code)),
      ['DUPLICATE_JOB_ID', 'stored', 'stored', 'stored', 'stored', 'STORE_FULL'],
    )
    const now = Date.now()
    assert.equal((await store.read('000000000001', now))?.status, 'running')
    assert.equal((await store.read('000000000004', now))?.status, 'pending')
    assert.equal(await store.read('000000000005', now), null)
    await store.claim(up(1), now)
    const unawaited = store.submit(job('000000000006'))
    await store.close()
    await unawaited
    store = open(driver, dir, { maxPending: 3 })
    assert.equal((await store.read('000000000006', Date.now()))?.status, 'pending')
  },
)

each("the ends of runs wait for the turn's group, and are committed together at its end", async (driver) => {
  const store = open(driver, freshDir())
  await store.submit(job('0000000000a1'))
  await store.submit(job('0000000000a2'))
  const claimed = await store.claim(up(2), Date.now())
  const ends = claimed.map(({ id, runs }) =>
    store.finish({ id, run: runs, completedAt: Date.now(), outcome: { status: 'failed', error: 'no' } }),
  )
  for (const { id } of claimed)
    assert.equal((await store.read(id, Date.now()))?.status, 'running', 'not yet: at the turn end')
  assert.deepEqual(await Promise.all(ends), [true, true])
  for (const { id } of claimed) assert.equal((await store.read(id, Date.now()))?.status, 'failed')
})

each(
  'a job left running by a dead process runs again; after 3 lost runs it fails with its webhook',
  async (driver) => {
    const dir = freshDir()
    let store = open(driver, dir)
    await store.submit(job('0000000000aa', { webhook: 'https://example.com/hook' }))
    for (let lost = 1; lost <= 3; lost++) {
      const [claimed] = await store.claim(up(1), Date.now())
      assert.equal(claimed?.id, '0000000000aa', `run ${lost}`)
      // The process dies: nothing more is written, and the next one opens the same file.
      await store.close()
      store = open(driver, dir)
      const seen = await store.read('0000000000aa', Date.now())
      assert.equal(seen?.lostRuns, lost)
      if (lost < 3) {
        assert.equal(seen?.status, 'pending')
        assert.equal(seen?.startedAt, null)
        assert.equal((await store.counts()).waiting, 1)
      } else {
        assert.equal(seen?.status, 'failed')
        assert.match(seen?.error ?? '', /lost 3 times/)
        assert.notEqual(seen?.completedAt, null)
        assert.equal((await store.counts()).waiting, 0)
      }
    }
    const [delivery] = await store.claimDeliveries(10, Date.now())
    assert.equal(delivery?.jobId, '0000000000aa')
    assert.equal(JSON.parse(delivery?.payload ?? '').status, 'failed')
  },
)

each('a delivery cut short by a dead process is sent again, that attempt not counted', async (driver) => {
  const dir = freshDir()
  let store = open(driver, dir)
  await store.submit(job('0000000000bb', { webhook: 'https://example.com/hook' }))
  const [claimed] = await store.claim(up(1), Date.now())
  await store.finish({
    id: '0000000000bb',
    run: claimed?.runs as number,
    completedAt: Date.now(),
    outcome: { status: 'completed', result: '{}', metadata: '{}' },
  })
  const [sending] = await store.claimDeliveries(10, Date.now())
  assert.equal(sending?.attempts, 1)
  assert.deepEqual(
    await store.claimDeliveries(10, Date.now()),
    [],
    'a delivery being sent is not claimed twice',
  )
  await store.close()
  store = open(driver, dir)
  const [again] = await store.claimDeliveries(10, Date.now())
  assert.equal(again?.id, sending?.id, 'the same webhook-id')
  assert.equal(again?.attempts, 1)
  const nextAt = Date.now() + 60_000
  const record = {
    attempt: 1,
    at: Date.now(),
    durationMs: 1,
    statusCode: 500,
    error: 'x',
    nextAttemptAt: nextAt,
  }
  await store.settleDelivery(again?.id as string, { kind: 'retry', nextAt, error: 'x', record }, Date.now())
  assert.deepEqual(await store.claimDeliveries(10, Date.now()), [], 'not due before its time')
  await store.close()
  store = open(driver, dir)
  const due = (await store.nextDeliveryAt()) as number
  assert.ok(due > Date.now(), 'a scheduled retry keeps its time across a restart')
  const [resumed] = await store.claimDeliveries(10, due)
  assert.equal(resumed?.id, sending?.id)
  assert.equal(resumed?.attempts, 2)
})

each('finished jobs expire after the TTL; pending and running ones never do', async (driver) => {
  const store = open(driver, freshDir(), { ttlMs: 1000 })
  const now = Date.now()
  await store.submit(job('0000000000c1'))
  await store.submit(job('0000000000c2'))
  await store.submit(job('0000000000c3'))
  const [done, running] = await store.claim(up(2), now)
  await store.finish({
    id: done?.id as string,
    run: done?.runs as number,
    completedAt: now,
    outcome: { status: 'completed', result: '{}', metadata: '{}' },
  })
  assert.notEqual(await store.read('0000000000c1', now + 999), null)
  assert.equal(await store.read('0000000000c1', now + 1000), null)
  assert.equal(await store.expire(now + 1000), 1)
  assert.equal((await store.read(running?.id as string, now + 10_000_000))?.status, 'running')
  assert.equal((await store.read('0000000000c3', now + 10_000_000))?.status, 'pending')
  assert.equal(await store.expire(now + 10_000_000), 0)
})

each('a closed store is unavailable, not a crash', async (driver) => {
  const store = open(driver, freshDir())
  await store.close()
  await assert.rejects(store.submit(job('0000000000d1')), StoreUnavailableError)
  await assert.rejects(store.read('0000000000d1', Date.now()), StoreUnavailableError)
  assert.equal(await store.ping(), false)
})

each(
  'times, counts and flags are stored as SQLite integers, as release 1.0.0 stored them',
  async (driver) => {
    const dir = freshDir()
    const store = open(driver, dir)
    await store.submit(job('0000000000e1', { webhook: 'https://example.com/hook' }))
    const [claimed] = await store.claim(up(1), Date.now())
    await store.finish({
      id: '0000000000e1',
      run: claimed?.runs as number,
      completedAt: Date.now(),
      outcome: { status: 'completed', result: '{}', metadata: '{}' },
    })
    const [sending] = await store.claimDeliveries(1, Date.now())
    await store.settleDelivery(sending?.id as string, { kind: 'released' }, Date.now())
    await store.close()
    const db = openConnection(join(dir, DATABASE_FILE), { driver, readOnly: true })
    const types = (sql: string) => Object.values(db.prepare(sql).get() as object)
    const jobTypes = types(
      'SELECT typeof(seq), typeof(cheap), typeof(created_at), typeof(started_at), typeof(completed_at), ' +
        'typeof(runs), typeof(lost_runs) FROM jobs',
    )
    const deliveryTypes = types(
      'SELECT typeof(attempts), typeof(next_at), typeof(updated_at) FROM deliveries',
    )
    db.close()
    assert.deepEqual(jobTypes, Array(7).fill('integer'))
    assert.deepEqual(deliveryTypes, Array(3).fill('integer'))
  },
)

// Release 1.0.0's schema, frozen here: its data directories must keep opening whatever the schema becomes.
const RELEASE_1_0_0_SCHEMA = `
  CREATE TABLE jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, algorithm TEXT NOT NULL,
    params TEXT NOT NULL, webhook TEXT, cheap INTEGER NOT NULL CHECK (cheap IN (0, 1)),
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    created_at INTEGER NOT NULL, started_at INTEGER, completed_at INTEGER, result TEXT, error TEXT,
    metadata TEXT, runs INTEGER NOT NULL DEFAULT 0, lost_runs INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX jobs_pending ON jobs (seq) WHERE status = 'pending';
  CREATE INDEX jobs_running ON jobs (seq) WHERE status = 'running';
  CREATE INDEX jobs_finished ON jobs (completed_at) WHERE completed_at IS NOT NULL;
  CREATE TABLE deliveries (
    id TEXT PRIMARY KEY, job_id TEXT NOT NULL, url TEXT NOT NULL, payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL, last_error TEXT,
    updated_at INTEGER NOT NULL);
  CREATE INDEX deliveries_due ON deliveries (next_at) WHERE status = 'pending';
  CREATE INDEX deliveries_sending ON deliveries (id) WHERE status = 'sending';
  CREATE INDEX deliveries_settled ON deliveries (updated_at) WHERE status IN ('delivered', 'failed');
  PRAGMA user_version = 1;`

for (const writer of usableDrivers()) {
  each(
    `a data directory that release 1.0.0 left, written with ${writer}, opens and recovers`,
    async (driver) => {
      const dir = freshDir()
      const now = Date.now()
      const db = openConnection(join(dir, DATABASE_FILE), { driver: writer })
      db.exec('PRAGMA journal_mode = WAL')
      db.exec(RELEASE_1_0_0_SCHEMA)
      const insert = db.prepare(
        `INSERT INTO jobs (id, algorithm, params, webhook, cheap, status, created_at, started_at, completed_at,
         result, metadata, runs)
       VALUES (?, 'PrimeChecker', '{"number":7}', NULL, 1, ?, ?, ?, ?, ?, ?, ?)`,
      )
      insert.run('0000000000f1', 'completed', now - 3, now - 2, now - 1, '{"is_prime":true}', '{}', 1)
      insert.run('0000000000f2', 'running', now - 2, now - 1, null, null, null, 1)
      insert.run('0000000000f3', 'pending', now - 1, null, null, null, null, 0)
      db.prepare(
        `INSERT INTO deliveries (id, job_id, url, payload, status, attempts, next_at, updated_at)
       VALUES ('msg_1', '0000000000f1', 'https://example.com/hook', '{}', 'sending', 1, ?, ?)`,
      ).run(now, now)
      db.close()

      const store = open(driver, dir)
      assert.equal((await store.read('0000000000f1', now))?.result, '{"is_prime":true}')
      assert.equal((await store.counts()).waiting, 2, 'the run the dead process left is pending again')
      assert.deepEqual(
        (await store.claim(up(2), now)).map((j) => [j.id, j.runs, j.lostRuns]),
        [
          ['0000000000f2', 2, 1],
          ['0000000000f3', 1, 0],
        ],
      )
      const [delivery] = await store.claimDeliveries(1, now)
      assert.deepEqual(
        [delivery?.id, delivery?.attempts],
        ['msg_1', 1],
        'the cut-short attempt is not counted',
      )
    },
  )
}

each("a job's trace context is kept with it and with its delivery", async (driver) => {
  const dir = freshDir()
  const store = open(driver, dir)
  const trace = '{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}'
  await store.submit({
    id: 'traced',
    algorithm: 'A',
    version: '1.0.0',
    params: '{}',
    webhook: null,
    cheap: true,
    createdAt: 1,
    trace,
  })
  await store.submit({
    id: 'plain',
    algorithm: 'A',
    version: '1.0.0',
    params: '{}',
    webhook: null,
    cheap: true,
    createdAt: 2,
  })
  assert.equal((await store.read('traced', 3))?.trace, trace)
  assert.equal((await store.read('plain', 3))?.trace, undefined)
  await store.close()
})

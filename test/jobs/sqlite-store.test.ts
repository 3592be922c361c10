// The embedded store on real SQLite files: schema versions, the lock, exact numbers, recovery of what a
// dead process left, order, capacity, retention and deliveries.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, test } from 'node:test'
import Database from 'better-sqlite3'
import { DATABASE_FILE, SqliteJobStore } from '../../src/jobs/sqlite-store.js'
import { StoreFullError, StoreUnavailableError } from '../../src/jobs/store.js'
import { webhookDelivery } from '../../src/webhooks/payload.js'
import { tempDataDir } from '../helpers/app.js'

const dirs: string[] = []
const stores: SqliteJobStore[] = []
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()))
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function open(dataDir: string, options: { ttlMs?: number; maxPending?: number } = {}): SqliteJobStore {
  const store = SqliteJobStore.open({
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

const job = (id: string, extra: { webhook?: string; params?: string; cheap?: boolean } = {}) => ({
  id,
  algorithm: 'PrimeChecker',
  params: extra.params ?? '{"number":7}',
  webhook: extra.webhook ?? null,
  cheap: extra.cheap ?? true,
  createdAt: Date.now(),
})

const up = (jobs: number, heavy = jobs) => ({ jobs, heavy })

test('the schema is versioned; a newer one is refused, naming the versions', async () => {
  const dir = freshDir()
  await open(dir).close()
  const db = new Database(join(dir, DATABASE_FILE))
  assert.equal(db.pragma('user_version', { simple: true }), 1)
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  db.pragma('user_version = 99')
  db.close()
  assert.throws(() => open(dir), /schema version 99, newer than this version of algoserve knows \(1\)/)
})

test('one process per data directory: a second store on it is refused while the first is open', () => {
  const dir = freshDir()
  open(dir)
  assert.throws(() => open(dir), /in use by another process/)
})

test('numbers are stored as exact decimal text, and survive reopening', async () => {
  const dir = freshDir()
  const store = open(dir)
  const big = `{"number":${'9'.repeat(4300)}}`
  await store.create(job('aaaaaaaaaaaa', { params: big }))
  const [claimed] = await store.claim(up(1), Date.now())
  const result = '{"number":18446744073709551617,"factors":[274177,67280421310721]}'
  await store.finish({
    id: 'aaaaaaaaaaaa',
    run: claimed?.runs as number,
    completedAt: Date.now(),
    outcome: { status: 'completed', result, metadata: '{"elapsed_time":0.5}' },
  })
  await store.close()
  const db = new Database(join(dir, DATABASE_FILE), { readonly: true })
  const row = db.prepare('SELECT typeof(params) AS p, typeof(result) AS r, params, result FROM jobs').get()
  db.close()
  assert.deepEqual(row, { p: 'text', r: 'text', params: big, result })
  const again = open(dir)
  assert.equal((await again.read('aaaaaaaaaaaa', Date.now()))?.result, result)
})

test('pending jobs are claimed oldest first, and a stale run cannot end a job', async () => {
  const store = open(freshDir())
  for (const id of ['000000000003', '000000000001', '000000000002']) await store.create(job(id))
  assert.equal(await store.countPending(), 3)
  const claimed = await store.claim(up(2), Date.now())
  assert.deepEqual(
    claimed.map((j) => j.id),
    ['000000000003', '000000000001'],
    'creation order, not id order',
  )
  assert.equal(await store.countPending(), 1)
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

test('a claim stops at the first job needing a thread once the threads are taken', async () => {
  const store = open(freshDir())
  await store.create(job('000000000001', { cheap: false }))
  await store.create(job('000000000002'))
  await store.create(job('000000000003', { cheap: false }))
  await store.create(job('000000000004'))
  const ids = async (jobs: number, heavy: number) =>
    (await store.claim({ jobs, heavy }, Date.now())).map((j) => j.id)
  assert.deepEqual(await ids(10, 1), ['000000000001', '000000000002'], 'creation order: 4 waits behind 3')
  assert.deepEqual(await ids(10, 0), [])
  assert.deepEqual(await ids(1, 1), ['000000000003'])
  assert.deepEqual(await ids(10, 0), ['000000000004'])
})

test('capacity: creating beyond max pending throws StoreFullError until one is claimed', async () => {
  const store = open(freshDir(), { maxPending: 2 })
  await store.create(job('000000000001'))
  await store.create(job('000000000002'))
  await assert.rejects(store.create(job('000000000003')), StoreFullError)
  await store.claim(up(1), Date.now())
  await store.create(job('000000000003'))
})

test('a job left running by a dead process runs again; after 3 lost runs it fails with its webhook', async () => {
  const dir = freshDir()
  let store = open(dir)
  await store.create(job('0000000000aa', { webhook: 'https://example.com/hook' }))
  for (let lost = 1; lost <= 3; lost++) {
    const [claimed] = await store.claim(up(1), Date.now())
    assert.equal(claimed?.id, '0000000000aa', `run ${lost}`)
    // The process dies: nothing more is written, and the next one opens the same file.
    await store.close()
    store = open(dir)
    const seen = await store.read('0000000000aa', Date.now())
    assert.equal(seen?.lostRuns, lost)
    if (lost < 3) {
      assert.equal(seen?.status, 'pending')
      assert.equal(seen?.startedAt, null)
      assert.equal(await store.countPending(), 1)
    } else {
      assert.equal(seen?.status, 'failed')
      assert.match(seen?.error ?? '', /lost 3 times/)
      assert.notEqual(seen?.completedAt, null)
      assert.equal(await store.countPending(), 0)
    }
  }
  const [delivery] = await store.claimDeliveries(10, Date.now())
  assert.equal(delivery?.jobId, '0000000000aa')
  assert.equal(JSON.parse(delivery?.payload ?? '').status, 'failed')
})

test('a delivery cut short by a dead process is sent again, that attempt not counted', async () => {
  const dir = freshDir()
  let store = open(dir)
  await store.create(job('0000000000bb', { webhook: 'https://example.com/hook' }))
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
  store = open(dir)
  const [again] = await store.claimDeliveries(10, Date.now())
  assert.equal(again?.id, sending?.id, 'the same webhook-id')
  assert.equal(again?.attempts, 1)
  await store.settleDelivery(
    again?.id as string,
    { kind: 'retry', nextAt: Date.now() + 60_000, error: 'x' },
    Date.now(),
  )
  assert.deepEqual(await store.claimDeliveries(10, Date.now()), [], 'not due before its time')
  await store.close()
  store = open(dir)
  const due = (await store.nextDeliveryAt()) as number
  assert.ok(due > Date.now(), 'a scheduled retry keeps its time across a restart')
  const [resumed] = await store.claimDeliveries(10, due)
  assert.equal(resumed?.id, sending?.id)
  assert.equal(resumed?.attempts, 2)
})

test('finished jobs expire after the TTL; pending and running ones never do', async () => {
  const store = open(freshDir(), { ttlMs: 1000 })
  const now = Date.now()
  await store.create(job('0000000000c1'))
  await store.create(job('0000000000c2'))
  await store.create(job('0000000000c3'))
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

test('a closed store is unavailable, not a crash', async () => {
  const store = open(freshDir())
  await store.close()
  await assert.rejects(store.create(job('0000000000d1')), StoreUnavailableError)
  await assert.rejects(store.read('0000000000d1', Date.now()), StoreUnavailableError)
  assert.equal(await store.ping(), false)
})

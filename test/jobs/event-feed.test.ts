// What a stream of job events sends (jobs/event-feed.ts): the events between what a client saw and the
// job now, event ids read back, and the hub's one read per change for every watcher of a job.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setImmediate } from 'node:timers/promises'
import { EventFeed, eventId, eventsSince, type JobEvent, parseEventId } from '../../src/jobs/event-feed.js'
import type { JobRecord } from '../../src/jobs/job.js'

const job = (extra: Partial<JobRecord> = {}): JobRecord => ({
  id: '0123456789ab',
  algorithm: 'Echo',
  version: '1.0.0',
  params: '{}',
  webhook: null,
  cheap: false,
  status: 'running',
  createdAt: 1_795_000_000_000,
  startedAt: 1_795_000_000_100,
  completedAt: null,
  result: null,
  error: null,
  metadata: null,
  runs: 1,
  lostRuns: 0,
  progress: null,
  ...extra,
})
const kinds = (events: JobEvent[]) => events.map((event) => `${event.event} ${event.id}`)
/** The data line of an event, from its bytes on the wire. */
const dataOf = (event: JobEvent | undefined) => /\ndata: (.*)\n\n$/.exec(event?.bytes.toString() ?? '')?.[1]

test('from nothing: the state, then the progress; from a seen progress, only a newer one', () => {
  const running = job({ progress: { fraction: 0.5, message: 'half', seq: 3 } })
  assert.deepEqual(kinds(eventsSince(running, null)), ['state 1.r.0', 'progress 1.r.3'])
  assert.equal(dataOf(eventsSince(running, null)[1]), '{"progress":0.5,"message":"half"}')
  assert.deepEqual(eventsSince(running, parseEventId('1.r.3')), [])
  assert.deepEqual(kinds(eventsSince(running, parseEventId('1.r.2'))), ['progress 1.r.3'])
  // A state event says the state, never the progress.
  assert.deepEqual(JSON.parse(dataOf(eventsSince(running, parseEventId('0.p.0'))[0]) ?? ''), {
    job_id: '0123456789ab',
    status: 'running',
    started_at: '2026-11-18T11:06:40.100+00:00',
  })
})

test('a run lost and taken again is told as a new state, its progress as new even at the same count', () => {
  const givenBack = job({ status: 'pending', startedAt: null })
  assert.deepEqual(kinds(eventsSince(givenBack, parseEventId('1.r.4'))), ['state 1.p.0'])
  const again = job({ runs: 2, progress: { fraction: 0.1, message: null, seq: 4 } })
  assert.deepEqual(kinds(eventsSince(again, parseEventId('1.r.4'))), ['state 2.r.0', 'progress 2.r.4'])
})

test('an ended job is its end, once: a client that saw the end of that run gets nothing', () => {
  const done = job({ status: 'completed', completedAt: 1_795_000_001_000, result: '{"n":1}', metadata: '{}' })
  assert.deepEqual(kinds(eventsSince(done, null)), ['end 1.c.0'])
  assert.deepEqual(kinds(eventsSince(done, parseEventId('1.r.9'))), ['end 1.c.0'])
  assert.deepEqual(eventsSince(done, parseEventId('1.c.0')), [])
  assert.equal(JSON.parse(dataOf(eventsSince(done, null)[0]) ?? '').result.n, 1)
})

test('event ids read back; anything else is no id', () => {
  const seen = { runs: 12, status: 'failed', seq: 0 } as const
  assert.deepEqual(parseEventId(eventId(seen)), seen)
  for (const text of [undefined, '', '1.x.0', '1.r', '1.r.0.0', 'a.r.0', ' 1.r.0', `${'9'.repeat(10)}.r.0`])
    assert.equal(parseEventId(text), null, String(text))
})

test('the hub reads a job once per change for all its watchers, once more for changes during a read, and ends them at the end', async () => {
  let current = job()
  let reads = 0
  let release = () => {}
  const watchers = new EventFeed({
    read: async () => {
      reads++
      await new Promise<void>((resolve) => {
        release = resolve
      })
      return current
    },
    onReadError: (error) => assert.fail(String(error)),
    max: 3,
  })
  const sent: string[][] = [[], [], []]
  let ended = 0
  const watcher = (i: number) => ({
    seen: null,
    send: (events: JobEvent[]) => sent[i]?.push(...kinds(events)),
    end: () => ended++,
  })
  for (const i of [0, 1, 2]) assert.equal(watchers.add(current.id, watcher(i)), true)
  assert.equal(watchers.add(current.id, watcher(0)), false, 'a fourth is over the bound')
  assert.equal(reads, 1, 'one read for three watchers')
  watchers.changed(current.id)
  watchers.changed(current.id)
  current = job({ progress: { fraction: 0.2, message: null, seq: 1 } })
  release()
  await setImmediate()
  assert.equal(reads, 2, 'the changes during the read make one more read')
  current = job({ status: 'failed', completedAt: 1_795_000_001_000, error: 'no' })
  release()
  await setImmediate()
  assert.deepEqual(
    sent,
    [0, 1, 2].map(() => ['state 1.r.0', 'progress 1.r.1', 'end 1.f.0']),
  )
  assert.equal(ended, 3)
  assert.equal(watchers.count, 0)
  assert.deepEqual([...watchers.ids()], [])
})

test('a store that is away: failed reads are reported once per interval, with their count, not once per job', async () => {
  const reports: number[] = []
  const watchers = new EventFeed({
    read: async () => {
      throw new Error('store away')
    },
    onReadError: (_error, failedReads) => reports.push(failedReads),
    reportEveryMs: 200,
    max: 100,
  })
  const ids = Array.from({ length: 10 }, (_, i) => `0000000000${String(i).padStart(2, '0')}`)
  const watcher = () => ({ seen: null, send: () => {}, end: () => {} })
  for (const id of ids) watchers.add(id, watcher())
  await setImmediate()
  assert.deepEqual(reports, [1], 'the first failure is told at once')
  for (const id of ids) watchers.changed(id)
  await setImmediate()
  assert.deepEqual(reports, [1], 'the next ones within the interval are counted, not told')
  await new Promise((resolve) => setTimeout(resolve, 250))
  watchers.changed(ids[0] as string)
  await setImmediate()
  assert.deepEqual(reports, [1, 20], 'after the interval, one report with the count since the last')
})

test("a job's event is made once for every stream that holds it: watchers that saw different things share its bytes", async () => {
  const done = job({ status: 'completed', completedAt: 1_795_000_001_000, result: '{"n":1}', metadata: '{}' })
  const watchers = new EventFeed({ read: async () => done, onReadError: () => {}, max: 10 })
  const ends: JobEvent[] = []
  const watcher = (seen: string | null) => ({
    seen: seen === null ? null : parseEventId(seen),
    send: (events: JobEvent[]) => ends.push(...events),
    end: () => {},
  })
  for (const seen of [null, '1.p.0', '1.r.0', '1.r.7']) watchers.add(done.id, watcher(seen))
  await setImmediate()
  assert.deepEqual(kinds(ends), ['end 1.c.0', 'end 1.c.0', 'end 1.c.0', 'end 1.c.0'])
  for (const end of ends) assert.equal(end.bytes, ends[0]?.bytes, 'the one Buffer')
  // A client that comes later, while a stream still holds the end, is given the same bytes.
  assert.equal(watchers.eventsSince(done, null)[0]?.bytes, ends[0]?.bytes)
})

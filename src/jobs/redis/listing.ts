// GET /jobs on Redis. BullMQ keeps jobs by state, ordered by when they entered it; GET /jobs lists by
// creation, so every job is also in a sorted set of ours (all scores 0, members ordered by creation,
// newest first: see positionMember), written before the job is added. Members whose job is gone
// (expired, or an add that failed) are removed as a listing or a sweep meets them.
import type { JobRecord, NewJob } from '../job.js'
import type { JobListPage, JobListQuery, ListPosition } from '../listing.js'
import type { RedisConnections } from './connections.js'
import { readJob, recordOf } from './view.js'

/**
 * Listing with a filter: the most jobs read at once (batches start at a page's size and double), and
 * the most looked at for one page.
 */
const LIST_BATCH = 400
const LIST_SCAN_MAX = 5000

/** Our sorted set of every job. */
export const createdKey = (redis: RedisConnections): string => redis.key('created')

/**
 * Newest first from our sorted set of every job. Without a filter a page reads `limit` + 1 jobs;
 * with one, jobs are read in batches and filtered by their state, looking at most at LIST_SCAN_MAX
 * per page (the page is then short, and its cursor says where to go on).
 */
export async function list(redis: RedisConnections, query: JobListQuery, now: number): Promise<JobListPage> {
  const index = createdKey(redis)
  const filtered = query.status !== null || query.algorithm !== null
  const jobs: JobRecord[] = []
  let start = query.cursor === null ? '-' : `(${positionMember(query.cursor)}`
  let scanned = 0
  let filteredBatch = query.limit + 1
  let last: ListPosition | null = null
  for (;;) {
    const batch = filtered ? filteredBatch : query.limit + 1 - jobs.length
    filteredBatch = Math.min(LIST_BATCH, filteredBatch * 2)
    const members = await redis.client.zrangebylex(index, start, '+', 'LIMIT', 0, batch)
    if (members.length === 0) return { jobs, next: null }
    const ids = members.map(memberId)
    const keys = await redis.queues.keysOf(ids)
    const records = await Promise.all(
      ids.map(async (id, i) => {
        const key = keys[i]
        if (key == null) return null
        const { job, state } = await readJob(redis.queues.of(key), id)
        return recordOf(job, state, redis.settings.ttlMs, now)
      }),
    )
    const gone: string[] = []
    for (const [i, record] of records.entries()) {
      const member = members[i] as string
      scanned++
      if (record === null) {
        gone.push(member)
        continue
      }
      if (query.status !== null && record.status !== query.status) continue
      if (query.algorithm !== null && record.algorithm !== query.algorithm) continue
      if (jobs.length === query.limit) {
        if (gone.length > 0) await cleanMembers(redis, gone)
        return { jobs, next: last }
      }
      jobs.push(record)
      last = { createdAt: record.createdAt, id: record.id }
    }
    if (gone.length > 0) await cleanMembers(redis, gone)
    start = `(${members.at(-1) as string}`
    if (members.length < batch) return { jobs, next: null }
    if (scanned >= LIST_SCAN_MAX) return { jobs, next: positionOfMember(members.at(-1) as string) }
  }
}

/**
 * The oldest members are the likeliest to be gone (cleaned by the sweep, or removed by BullMQ's own
 * age rule when another job ended): those of the `batch` oldest whose job no longer exists are removed.
 */
export async function cleanOldest(redis: RedisConnections, batch: number): Promise<void> {
  const oldest = await redis.client.zrevrangebylex(createdKey(redis), '+', '-', 'LIMIT', 0, batch)
  if (oldest.length > 0) await cleanMembers(redis, oldest)
}

/**
 * Removes the members (and the entries in the id → queue index) of jobs that no longer exist (a
 * job past its retention may linger a moment).
 */
async function cleanMembers(redis: RedisConnections, members: string[]): Promise<void> {
  const { queues } = redis
  const ids = members.map(memberId)
  const keys = await queues.keysOf(ids)
  const exists = await Promise.all(
    ids.map((id, i) => {
      const key = keys[i]
      return key == null ? 0 : redis.client.exists(queues.jobKey(key, id))
    }),
  )
  const gone = members.filter((_, i) => exists[i] === 0)
  if (gone.length === 0) return
  await redis.client.zrem(createdKey(redis), ...gone)
  await queues.forget(gone.map(memberId))
}

// The member of a job in our sorted set: ordered as GET /jobs lists (created_at desc, then id desc)
// when compared as bytes. Both parts are inverted (a time counted down from 10^15, each hex digit from
// f), so that ascending order is newest first; the id is read back from it.
const TIME_LIMIT = 10 ** 15
const invertHex = (hex: string): string =>
  [...hex].map((digit) => (15 - Number.parseInt(digit, 16)).toString(16)).join('')

function positionMember(position: ListPosition): string {
  return `${String(TIME_LIMIT - 1 - position.createdAt).padStart(15, '0')}:${invertHex(position.id)}`
}

/** The member of a new job. */
export const listMember = (job: NewJob): string => positionMember(job)

const memberId = (member: string): string => invertHex(member.slice(16))

function positionOfMember(member: string): ListPosition {
  return { createdAt: TIME_LIMIT - 1 - Number(member.slice(0, 15)), id: memberId(member) }
}

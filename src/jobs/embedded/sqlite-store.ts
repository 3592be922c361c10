// The embedded job store: one SQLite file in the data directory, used by one process at a time.
// WAL with synchronous=NORMAL: a commit survives the process being killed (it is in the WAL file);
// only a power cut can lose the last commits. The process holds an exclusive lock on the file, so a
// job found `running` at start was run by a process that died: its run is counted as lost, and traced
// as such (that process could not).
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import {
  DuplicateJobIdError,
  IdempotencyKeyReusedError,
  JOB_CANCELLED,
  StoreFullError,
  storeFailure,
} from '../../errors.js'
import { tracing } from '../../tracing/seams.js'
import type { DeliveryAttempt } from '../../webhooks/attempt.js'
import type { IdempotencyClaim, JobCounts, Submitted } from '../backend.js'
import type { StoredDelivery } from '../deliveries.js'
import { type JobRecord, type JobState, lostRunsError, MAX_LOST_RUNS, type NewJob } from '../job.js'
import type { JobListPage, JobListQuery } from '../listing.js'
import { emptyMinute, type JobSummary, MINUTE_MS, SUMMARY_MINUTES, summaryMinutes } from '../summary.js'
import { migrate } from './migrations/index.js'
import {
  type Connection,
  type DriverName,
  inTransaction,
  openConnection,
  SQLITE_BUSY,
  SQLITE_CONSTRAINT_UNIQUE,
  sqliteCode,
} from './sqlite-driver.js'
import type {
  ClaimLimits,
  Delivery,
  DeliveryFactory,
  DeliveryOutcome,
  JobEnd,
  JobStore,
  NewDelivery,
} from './store.js'

export const DATABASE_FILE = 'jobs.sqlite3'

export interface SqliteStoreOptions {
  dataDir: string
  /** How long a finished job stays readable after completed_at, in ms. */
  ttlMs: number
  maxPending: number
  makeDelivery: DeliveryFactory
  /** The SQLite binding; by default the runtime's own where it has one (see sqlite-driver.ts). */
  driver?: DriverName
}

interface JobRow {
  id: string
  algorithm: string
  params: string
  webhook: string | null
  cheap: 0 | 1
  status: JobState
  created_at: number
  started_at: number | null
  completed_at: number | null
  result: string | null
  error: string | null
  metadata: string | null
  runs: number
  lost_runs: number
  trace: string | null
}

interface DeliveryRow {
  id: string
  job_id: string
  url: string
  payload: string
  attempts: number
  trace: string | null
}

/** A write waiting in the group that the next turn of the event loop commits. */
interface GroupedWrite {
  work: () => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

const JOB_COLUMNS =
  'id, algorithm, params, webhook, cheap, status, created_at, started_at, completed_at, result, error, metadata, ' +
  'runs, lost_runs, trace'

export class SqliteJobStore implements JobStore {
  readonly #db: Connection
  readonly #ttlMs: number
  readonly #maxPending: number
  readonly #makeDelivery: DeliveryFactory
  // Kept in memory: this process is the file's only writer, and counting the index on every
  // POST /jobs would cost more than the insert. By algorithm too, for the gauges.
  #pending = 0
  #pendingOf = new Map<string, number>()
  // The deliveries waiting (due or not), kept so: with none, a claim of deliveries costs nothing, and
  // each delivery's end would otherwise make one that finds none.
  #pendingDeliveries = 0
  readonly #sql
  // The POSTs' inserts made in one turn of the event loop, committed together at its end: a commit writes
  // each page it changed to the WAL, and one job's insert changes several (the table, its indexes, the
  // summary's counters), the same pages for every job of a group (docs/benchmarks/jobs.md). Each caller is
  // answered once the group is committed. So are the ends of runs: a claimed batch's cheap jobs, or the
  // runs of a batch on a worker thread, whose outcomes arrive together, and the webhook deliveries' claims
  // and settles. Claims of jobs commit at once: made to wait for the turn's end, they would hold back the
  // runs they start.
  #group: GroupedWrite[] = []

  private constructor(db: Connection, options: SqliteStoreOptions) {
    this.#db = db
    this.#ttlMs = options.ttlMs
    this.#maxPending = options.maxPending
    this.#makeDelivery = options.makeDelivery
    this.#sql = {
      insert: db.prepare(
        `INSERT INTO jobs (id, algorithm, params, webhook, cheap, status, created_at, trace)
         VALUES (@id, @algorithm, @params, @webhook, @cheap, 'pending', @createdAt, @trace)`,
      ),
      read: db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`),
      // `full`: a JSON array of the algorithms none of whose jobs may be taken now. Left to itself, SQLite
      // took jobs_status_created and sorted every pending job by seq at each claim: under a backlog, a
      // claim that takes one job read them all.
      nextPending: db.prepare(
        `SELECT seq, cheap, algorithm FROM jobs INDEXED BY jobs_pending WHERE status = 'pending'
         AND algorithm NOT IN (SELECT value FROM json_each(@full)) ORDER BY seq LIMIT @limit`,
      ),
      start: db.prepare(
        // A cheap job runs inline within its claim's batch: it starts now. Any other starts when its
        // thread or process takes it (begin): until then it waits, and reads `pending` (toRecord).
        `UPDATE jobs SET status = 'running', started_at = CASE WHEN cheap = 1 THEN @now END, runs = runs + 1
         WHERE seq = @seq RETURNING ${JOB_COLUMNS}`,
      ),
      begin: db.prepare(
        `UPDATE jobs SET started_at = @now
         WHERE id = @id AND status = 'running' AND runs = @run AND started_at IS NULL`,
      ),
      complete: db.prepare(
        `UPDATE jobs SET status = 'completed', completed_at = @completedAt, result = @result,
           metadata = @metadata, error = NULL
         WHERE id = @id AND status = 'running' AND runs = @run RETURNING ${JOB_COLUMNS}`,
      ),
      fail: db.prepare(
        `UPDATE jobs SET status = 'failed', completed_at = @completedAt, error = @error,
           result = NULL, metadata = NULL
         WHERE id = @id AND status = 'running' AND runs = @run RETURNING ${JOB_COLUMNS}`,
      ),
      release: db.prepare(
        `UPDATE jobs SET status = 'pending', started_at = NULL
         WHERE id = @id AND status = 'running' AND runs = @run RETURNING algorithm`,
      ),
      lose: db.prepare(
        `UPDATE jobs SET status = 'pending', started_at = NULL, lost_runs = lost_runs + 1
         WHERE id = @id AND status = 'running' AND runs = @run RETURNING ${JOB_COLUMNS}`,
      ),
      failLost: db.prepare(
        `UPDATE jobs SET status = 'failed', completed_at = @now, started_at = coalesce(started_at, @now),
           error = @error
         WHERE id = @id RETURNING ${JOB_COLUMNS}`,
      ),
      running: db.prepare(`SELECT id, algorithm, runs, started_at, trace FROM jobs WHERE status = 'running'`),
      countPendingDeliveries: db.prepare(`SELECT count(*) AS n FROM deliveries WHERE status = 'pending'`),
      // Claimed runs are few (the runner's concurrency, and a claim's batch of cheap jobs).
      runningOf: db.prepare(
        `SELECT algorithm, started_at IS NULL AS waits, count(*) AS n FROM jobs INDEXED BY jobs_running
         WHERE status = 'running' GROUP BY algorithm, waits`,
      ),
      pendingOf: db.prepare(
        `SELECT algorithm, count(*) AS n FROM jobs INDEXED BY jobs_pending WHERE status = 'pending'
         GROUP BY algorithm`,
      ),
      // The summary: the counters (migrations/v3-job-summary.ts), less the finished jobs past their
      // retention that the sweeper has not deleted yet (a read shows them as gone): at most one sweep's
      // worth, on an index.
      counts: db.prepare('SELECT status, n FROM job_counts'),
      // Sums rather than GROUP BY status, which sorts the rows in a temporary b-tree.
      countExpired: db.prepare(
        `SELECT coalesce(sum(status = 'completed'), 0) AS completed, coalesce(sum(status = 'failed'), 0) AS failed
         FROM jobs INDEXED BY jobs_finished WHERE completed_at IS NOT NULL AND completed_at <= @before`,
      ),
      endedSince: db.prepare(
        `SELECT minute, bucket, completed, failed, latency_sum_ms FROM job_minutes WHERE minute >= @first`,
      ),
      expireMinutes: db.prepare('DELETE FROM job_minutes WHERE minute < @first'),
      expireJobs: db.prepare(
        `DELETE FROM jobs WHERE completed_at IS NOT NULL AND completed_at <= @before
           AND status IN ('completed', 'failed')`,
      ),
      expireDeliveries: db.prepare(
        `DELETE FROM deliveries WHERE status IN ('delivered', 'failed') AND updated_at <= @before`,
      ),
      insertDelivery: db.prepare(
        `INSERT INTO deliveries (id, job_id, url, payload, status, next_at, updated_at, trace)
         VALUES (@id, @jobId, @url, @payload, 'pending', @now, @now, @trace)`,
      ),
      claimDeliveries: db.prepare(
        `UPDATE deliveries SET status = 'sending', attempts = attempts + 1, updated_at = @now
         WHERE id IN (SELECT id FROM deliveries WHERE status = 'pending' AND next_at <= @now
                        AND NOT EXISTS (SELECT 1 FROM json_each(@skip)
                                        WHERE substr(url, 1, length(value) + 1) = value || '/')
                      ORDER BY next_at LIMIT @limit)
         RETURNING id, job_id, url, payload, attempts, next_at, trace`,
      ),
      cancelPending: db.prepare(
        `UPDATE jobs SET status = 'failed', completed_at = @now, error = @error
         WHERE id = @id AND status = 'pending' RETURNING ${JOB_COLUMNS}`,
      ),
      // Row values keep the cursor's condition an index range; no cursor is the largest position.
      list: db.prepare(
        `SELECT ${JOB_COLUMNS} FROM jobs INDEXED BY jobs_created
         WHERE (created_at, id) < (@at, @id) AND (completed_at IS NULL OR completed_at > @cutoff)
           AND (@algorithm IS NULL OR algorithm = @algorithm)
         ORDER BY created_at DESC, id DESC LIMIT @limit`,
      ),
      listByStatus: db.prepare(
        `SELECT ${JOB_COLUMNS} FROM jobs INDEXED BY jobs_status_created
         WHERE status = @status AND (created_at, id) < (@at, @id)
           AND (completed_at IS NULL OR completed_at > @cutoff)
           AND (@algorithm IS NULL OR algorithm = @algorithm)
         ORDER BY created_at DESC, id DESC LIMIT @limit`,
      ),
      readKey: db.prepare(
        `SELECT k.fingerprint, k.job_id, k.created_at AS key_at, j.created_at
         FROM idempotency_keys k LEFT JOIN jobs j ON j.id = k.job_id WHERE k.key = ?`,
      ),
      putKey: db.prepare(
        `INSERT OR REPLACE INTO idempotency_keys (key, fingerprint, job_id, created_at)
         VALUES (@key, @fingerprint, @jobId, @now)`,
      ),
      expireKeys: db.prepare('DELETE FROM idempotency_keys WHERE created_at <= @before'),
      deliveryOf: db.prepare('SELECT id, url, status, attempts FROM deliveries WHERE job_id = ?'),
      attemptsOf: db.prepare(
        `SELECT attempt, at, duration_ms, status_code, error, next_at FROM delivery_attempts
         WHERE delivery_id = ? ORDER BY attempt`,
      ),
      insertAttempt: db.prepare(
        `INSERT OR REPLACE INTO delivery_attempts (delivery_id, attempt, at, duration_ms, status_code, error, next_at)
         VALUES (@deliveryId, @attempt, @at, @durationMs, @statusCode, @error, @nextAttemptAt)`,
      ),
      expireAttempts: db.prepare(
        `DELETE FROM delivery_attempts WHERE delivery_id IN
           (SELECT id FROM deliveries WHERE status IN ('delivered', 'failed') AND updated_at <= @before)`,
      ),
      ping: db.prepare('SELECT 1'),
      nextDelivery: db.prepare(
        `SELECT min(next_at) AS at FROM deliveries WHERE status = 'pending'
           AND NOT EXISTS (SELECT 1 FROM json_each(@skip) WHERE substr(url, 1, length(value) + 1) = value || '/')`,
      ),
      settleDelivery: db.prepare(
        `UPDATE deliveries SET status = @status, next_at = @nextAt, last_error = @error, updated_at = @now,
           attempts = attempts - @uncount
         WHERE id = @id AND status = 'sending'`,
      ),
      unsendDeliveries: db.prepare(
        `UPDATE deliveries SET status = 'pending', attempts = attempts - 1 WHERE status = 'sending'`,
      ),
    }
    this.#countPending()
  }

  /** Opens (creating or migrating) the store in `dataDir`, and recovers what a dead process left. */
  static open(options: SqliteStoreOptions): SqliteJobStore {
    mkdirSync(options.dataDir, { recursive: true })
    const db = openConnection(join(options.dataDir, DATABASE_FILE), {
      timeoutMs: 2000,
      driver: options.driver,
    })
    try {
      // Exclusive locking: one process per data directory. A second one fails here, saying why.
      try {
        db.exec('PRAGMA locking_mode = EXCLUSIVE')
        db.exec('PRAGMA journal_mode = WAL')
        db.exec('BEGIN EXCLUSIVE; COMMIT')
      } catch (error) {
        if (sqliteCode(error) !== SQLITE_BUSY) throw error
        throw new Error(`The job store in ${options.dataDir} is in use by another process.`)
      }
      db.exec('PRAGMA synchronous = NORMAL')
      migrate(db)
      const store = new SqliteJobStore(db, options)
      store.#recover(Date.now())
      return store
    } catch (error) {
      db.close()
      throw error
    }
  }

  /** With an Idempotency-Key, the key is read and recorded in the transaction of the job's insert. */
  submit(job: NewJob, idempotency?: IdempotencyClaim): Promise<Submitted> {
    return this.#write(() => {
      if (idempotency !== undefined) {
        const seen = this.#sql.readKey.get(idempotency.key) as
          | { fingerprint: string; job_id: string; key_at: number; created_at: number | null }
          | undefined
        // A key past the retention, or whose job is gone, is free again.
        if (seen !== undefined && seen.key_at + this.#ttlMs > job.createdAt && seen.created_at !== null) {
          if (seen.fingerprint !== idempotency.fingerprint) throw new IdempotencyKeyReusedError()
          return { id: seen.job_id, createdAt: seen.created_at, replayed: true }
        }
      }
      if (this.#pending >= this.#maxPending) {
        throw new StoreFullError(`${this.#pending} jobs are waiting, the most allowed.`)
      }
      try {
        const { id, algorithm, params, webhook, createdAt } = job
        const trace = job.trace ?? null
        this.#sql.insert.run({ id, algorithm, params, webhook, cheap: job.cheap ? 1 : 0, createdAt, trace })
      } catch (error) {
        if (sqliteCode(error) === SQLITE_CONSTRAINT_UNIQUE) throw new DuplicateJobIdError(job.id)
        throw error
      }
      if (idempotency !== undefined) {
        this.#sql.putKey.run({ ...idempotency, jobId: job.id, now: job.createdAt })
      }
      this.#addPending(job.algorithm, 1)
      return { id: job.id, createdAt: job.createdAt, replayed: false }
    })
  }

  async cancelPending(id: string, now: number): Promise<JobRecord | null> {
    return this.#now(() => {
      const row = this.#sql.cancelPending.get({ id, now, error: JOB_CANCELLED }) as JobRow | undefined
      if (row === undefined) return null
      this.#addPending(row.algorithm, -1)
      const record = toRecord(row)
      this.#schedule(this.#makeDelivery(record), now)
      return record
    })
  }

  async list(query: JobListQuery, now: number): Promise<JobListPage> {
    return this.#guard(() => {
      const params = {
        at: query.cursor?.createdAt ?? Number.MAX_SAFE_INTEGER,
        id: query.cursor?.id ?? '',
        cutoff: now - this.#ttlMs,
        algorithm: query.algorithm,
        limit: query.limit + 1,
      }
      const rows = (
        query.status === null
          ? this.#sql.list.all(params)
          : this.#sql.listByStatus.all({ ...params, status: query.status })
      ) as JobRow[]
      const jobs = rows.slice(0, query.limit).map(toRecord)
      const last = jobs.at(-1)
      const more = rows.length > query.limit && last !== undefined
      return { jobs, next: more ? { createdAt: last.createdAt, id: last.id } : null }
    })
  }

  async delivery(job: JobRecord): Promise<StoredDelivery | null> {
    if (job.webhook === null) return null
    return this.#guard(() => {
      const delivery = this.#sql.deliveryOf.get(job.id) as
        | { id: string; url: string; status: string; attempts: number }
        | undefined
      if (delivery === undefined) return null
      const attempts = (
        this.#sql.attemptsOf.all(delivery.id) as {
          attempt: number
          at: number
          duration_ms: number
          status_code: number | null
          error: string | null
          next_at: number | null
        }[]
      ).map(
        (row): DeliveryAttempt => ({
          attempt: row.attempt,
          at: row.at,
          durationMs: row.duration_ms,
          statusCode: row.status_code,
          error: row.error,
          nextAttemptAt: row.next_at,
        }),
      )
      const { status } = delivery
      const ended = status === 'delivered' || status === 'failed' ? status : null
      return { url: delivery.url, attempts, ended }
    })
  }

  async read(id: string, now: number): Promise<JobRecord | null> {
    return this.#guard(() => {
      const row = this.#sql.read.get(id) as JobRow | undefined
      if (row === undefined) return null
      if (row.completed_at !== null && row.completed_at + this.#ttlMs <= now) return null
      return toRecord(row)
    })
  }

  async claim(limits: ClaimLimits, now: number): Promise<JobRecord[]> {
    if (limits.jobs <= 0 || this.#pending === 0) return []
    return this.#now(() => {
      const claimed: JobRecord[] = []
      const room = new Map(limits.room)
      let heavy = 0
      // Read again when an algorithm's room ran out in the rows read: later rows of others may be free.
      let again = true
      take: while (again && claimed.length < limits.jobs) {
        again = false
        const full = [...room].flatMap(([algorithm, left]) => (left > 0 ? [] : [algorithm]))
        const rows = this.#sql.nextPending.all({
          limit: limits.jobs - claimed.length,
          full: JSON.stringify(full),
        }) as { seq: number; cheap: 0 | 1; algorithm: string }[]
        for (const { seq, cheap, algorithm } of rows) {
          const left = room.get(algorithm)
          if (left !== undefined && left <= 0) {
            again = true
            continue
          }
          if (!cheap && ++heavy > limits.heavy) break take
          if (left !== undefined) room.set(algorithm, left - 1)
          claimed.push(toRecord(this.#sql.start.get({ seq, now }) as JobRow))
        }
      }
      for (const job of claimed) this.#addPending(job.algorithm, -1)
      return claimed
    })
  }

  finish(end: JobEnd): Promise<boolean> {
    const write = () => {
      const { id, run, completedAt, outcome } = end
      const row = (
        outcome.status === 'completed'
          ? this.#sql.complete.get({
              id,
              run,
              completedAt,
              result: outcome.result,
              metadata: outcome.metadata,
            })
          : this.#sql.fail.get({ id, run, completedAt, error: outcome.error })
      ) as JobRow | undefined
      if (row === undefined) return false
      this.#schedule(this.#makeDelivery(toRecord(row)), completedAt)
      return true
    }
    return this.#write(write)
  }

  async release(id: string, run: number): Promise<void> {
    this.#guard(() => {
      const row = this.#sql.release.get({ id, run }) as { algorithm: string } | undefined
      if (row !== undefined) this.#addPending(row.algorithm, 1)
    })
  }

  async loseRun(id: string, run: number, now: number): Promise<JobState | null> {
    return this.#now(() => {
      const row = this.#sql.lose.get({ id, run }) as JobRow | undefined
      if (row === undefined) return null
      return this.#afterLostRun(row, now)
    })
  }

  async expire(now: number): Promise<number> {
    return this.#guard(() => {
      const before = now - this.#ttlMs
      this.#sql.expireKeys.run({ before })
      this.#sql.expireAttempts.run({ before })
      this.#sql.expireDeliveries.run({ before })
      this.#sql.expireMinutes.run({ first: Math.floor(now / MINUTE_MS) - (SUMMARY_MINUTES - 1) })
      return Number(this.#sql.expireJobs.run({ before }).changes)
    })
  }

  async summary(now: number): Promise<JobSummary> {
    return this.#guard(() => {
      const counts: Record<JobState, number> = { pending: 0, running: 0, completed: 0, failed: 0 }
      for (const row of this.#sql.counts.all() as { status: JobState; n: number }[]) {
        counts[row.status] = row.n
      }
      const expired = this.#sql.countExpired.get({ before: now - this.#ttlMs }) as {
        completed: number
        failed: number
      }
      counts.completed -= expired.completed
      counts.failed -= expired.failed
      // Claimed runs still waiting for a thread or a process read `pending`, and count so.
      for (const { waits, n } of this.#claimed()) {
        if (!waits) continue
        counts.running -= n
        counts.pending += n
      }
      const minutes = summaryMinutes(now)
      const ended = minutes.map(emptyMinute)
      const first = (minutes[0] as number) / MINUTE_MS
      for (const row of this.#sql.endedSince.all({ first }) as {
        minute: number
        bucket: number
        completed: number
        failed: number
        latency_sum_ms: number
      }[]) {
        // A minute after the current one (the clock was set back) is left out.
        const minute = ended[row.minute - first]
        if (minute === undefined) continue
        minute.completed += row.completed
        minute.failed += row.failed
        minute.latency[row.bucket] = (minute.latency[row.bucket] ?? 0) + row.completed + row.failed
        minute.latencySumMs += row.latency_sum_ms
      }
      return { counts, ended }
    })
  }

  async counts(): Promise<JobCounts> {
    return this.#guard(() => {
      const byAlgorithm = new Map<string, { waiting: number; running: number }>()
      for (const [algorithm, waiting] of this.#pendingOf) byAlgorithm.set(algorithm, { waiting, running: 0 })
      let waiting = this.#pending
      let running = 0
      for (const { algorithm, waits, n } of this.#claimed()) {
        const counts = byAlgorithm.get(algorithm) ?? { waiting: 0, running: 0 }
        byAlgorithm.set(algorithm, counts)
        if (waits) {
          counts.waiting += n
          waiting += n
        } else {
          counts.running += n
          running += n
        }
      }
      return { waiting, running, byAlgorithm }
    })
  }

  /** Marks run `run` of job `id` begun (its thread or process took it): from now on it reads `running`. */
  begin(id: string, run: number, now: number): Promise<void> {
    return this.#write(() => {
      this.#sql.begin.run({ id, run, now })
    })
  }

  /** The claimed runs by algorithm, begun or still waiting for a thread or a process. */
  #claimed(): { algorithm: string; waits: 0 | 1; n: number }[] {
    return this.#sql.runningOf.all() as { algorithm: string; waits: 0 | 1; n: number }[]
  }

  #addPending(algorithm: string, n: number): void {
    this.#pending += n
    const left = (this.#pendingOf.get(algorithm) ?? 0) + n
    if (left > 0) this.#pendingOf.set(algorithm, left)
    else this.#pendingOf.delete(algorithm)
  }

  /** The pending counts read from the jobs: at start, and after a group that SQLite rolled back. */
  #countPending(): void {
    this.#pendingOf = new Map()
    this.#pending = 0
    for (const { algorithm, n } of this.#sql.pendingOf.all() as { algorithm: string; n: number }[])
      this.#addPending(algorithm, n)
  }

  // A delivery whose claim or settle a crash left unwritten is pending at restart and sent again, as is
  // one left `sending`.
  async claimDeliveries(limit: number, now: number, skip: readonly string[] = []): Promise<Delivery[]> {
    if (limit <= 0 || this.#pendingDeliveries === 0) return []
    return this.#write(() => {
      const params = { now, limit, skip: JSON.stringify(skip) }
      const rows = this.#sql.claimDeliveries.all(params) as (DeliveryRow & { next_at: number })[]
      this.#pendingDeliveries -= rows.length
      return rows
        .sort((a, b) => a.next_at - b.next_at)
        .map((row) => ({
          id: row.id,
          jobId: row.job_id,
          url: row.url,
          payload: row.payload,
          attempts: row.attempts,
          dueAt: row.next_at,
          trace: row.trace ?? undefined,
        }))
    })
  }

  async nextDeliveryAt(skip: readonly string[] = []): Promise<number | null> {
    if (this.#pendingDeliveries === 0) return null
    return this.#guard(
      () => (this.#sql.nextDelivery.get({ skip: JSON.stringify(skip) }) as { at: number | null }).at,
    )
  }

  async settleDelivery(id: string, outcome: DeliveryOutcome, now: number): Promise<void> {
    const settled = { id, now, status: 'pending', nextAt: now, error: null as string | null, uncount: 0 }
    switch (outcome.kind) {
      case 'delivered':
        settled.status = 'delivered'
        break
      case 'failed':
        settled.status = 'failed'
        settled.error = outcome.error
        break
      case 'retry':
        settled.nextAt = outcome.nextAt
        settled.error = outcome.error
        break
      case 'released':
      case 'deferred':
        // Cut short by a shutdown, or not made: due again (now, or when deferred to), and the attempt
        // does not count.
        settled.nextAt = outcome.kind === 'deferred' ? outcome.nextAt : now
        settled.uncount = 1
        break
    }
    const record = outcome.kind === 'released' || outcome.kind === 'deferred' ? undefined : outcome.record
    return this.#write(() => {
      if (this.#sql.settleDelivery.run(settled).changes === 0) return
      if (record !== undefined) this.#sql.insertAttempt.run({ deliveryId: id, ...record })
      if (settled.status === 'pending') this.#pendingDeliveries++
    })
  }

  async ping(): Promise<boolean> {
    try {
      this.#sql.ping.get()
      return true
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    if (!this.#db.open) return
    this.#commitGroup()
    this.#db.close()
  }

  /** At start: runs left `running` by a dead process are lost; so are attempts left `sending`. */
  #recover(now: number): void {
    inTransaction(this.#db, () => {
      const running = this.#sql.running.all() as Pick<
        JobRow,
        'id' | 'algorithm' | 'runs' | 'started_at' | 'trace'
      >[]
      for (const { id, algorithm, runs, started_at, trace } of running) {
        const row = this.#sql.lose.get({ id, run: runs }) as JobRow
        tracing.lost({
          id,
          algorithm,
          trace: trace ?? undefined,
          attempt: runs,
          startedAt: started_at,
          lostAt: now,
        })
        this.#afterLostRun(row, now)
      }
      this.#sql.unsendDeliveries.run()
      this.#pendingDeliveries = (this.#sql.countPendingDeliveries.get() as { n: number }).n
    })
  }

  /** `row` was just put back to pending with one more lost run: it waits, or fails for good. */
  #afterLostRun(row: JobRow, now: number): JobState {
    if (row.lost_runs < MAX_LOST_RUNS) {
      this.#addPending(row.algorithm, 1)
      return 'pending'
    }
    const failed = this.#sql.failLost.get({ id: row.id, now, error: lostRunsError(row.lost_runs) }) as JobRow
    this.#schedule(this.#makeDelivery(toRecord(failed)), now)
    return 'failed'
  }

  #schedule(delivery: NewDelivery | null, now: number): void {
    if (delivery === null) return
    const { id, jobId, url, payload } = delivery
    this.#sql.insertDelivery.run({ id, jobId, url, payload, now, trace: delivery.trace ?? null })
    this.#pendingDeliveries++
  }

  /** Runs `work` in a transaction of its own, now. */
  async #now<T>(work: () => T): Promise<T> {
    return this.#guard(() => inTransaction(this.#db, work))
  }

  /**
   * Runs `work` in the group committed at the end of this turn of the event loop. A work that throws must
   * have written nothing: its checks come before its writes, and a statement that fails undoes itself.
   */
  #write<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#group.length === 0) setImmediate(() => this.#commitGroup())
      this.#group.push({ work, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  #commitGroup(): void {
    const group = this.#group
    if (group.length === 0) return
    this.#group = []
    const outcomes: { ok: boolean; value: unknown }[] = []
    try {
      inTransaction(this.#db, () => {
        for (const { work } of group) {
          try {
            outcomes.push({ ok: true, value: work() })
          } catch (error) {
            // SQLite rolled the whole transaction back (a full disk, an I/O error): nothing of the group
            // holds.
            if (!this.#db.inTransaction) throw error
            outcomes.push({ ok: false, value: error })
          }
        }
      })
    } catch (error) {
      for (const { reject } of group) reject(storeFailure(error, 'The job store failed.'))
      this.#recount()
      return
    }
    group.forEach(({ resolve, reject }, i) => {
      const { ok, value } = outcomes[i] as { ok: boolean; value: unknown }
      if (ok) resolve(value)
      else reject(storeFailure(value, 'The job store failed.'))
    })
  }

  /** The counts kept in memory, read again after a group that SQLite rolled back had changed them. */
  #recount(): void {
    try {
      this.#countPending()
      this.#pendingDeliveries = (this.#sql.countPendingDeliveries.get() as { n: number }).n
    } catch {
      // The database itself is failing: the next use says so.
    }
  }

  /** SQLite's own failures (disk full, I/O error, a closed database) make the store unavailable. */
  #guard<T>(work: () => T): T {
    try {
      return work()
    } catch (error) {
      throw storeFailure(error, 'The job store failed.')
    }
  }
}

/** A claimed run not begun (its started_at not yet set) waits for a thread or a process: `pending`. */
function toRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    algorithm: row.algorithm,
    // Not kept by this store: a job reads as of its algorithm's version at its run.
    version: '',
    params: row.params,
    webhook: row.webhook,
    cheap: row.cheap === 1,
    status: row.status === 'running' && row.started_at === null ? 'pending' : row.status,
    createdAt: row.created_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    result: row.result,
    error: row.error,
    metadata: row.metadata,
    runs: row.runs,
    lostRuns: row.lost_runs,
    // Progress is the runner's, in memory (runner.ts).
    progress: null,
    // Only when traced: a job's record is the same with tracing off as before it existed.
    ...(row.trace === null ? {} : { trace: row.trace }),
  }
}

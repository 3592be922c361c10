// The embedded job store: one SQLite file in the data directory, used by one process at a time.
// WAL with synchronous=NORMAL: a commit survives the process being killed (it is in the WAL file);
// only a power cut can lose the last commits. The process holds an exclusive lock on the file, so a
// job found `running` at start was run by a process that died: its run is counted as lost.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { IdempotencyKeyReusedError, JOB_CANCELLED } from '../../errors.js'
import type { IdempotencyClaim, Submitted } from '../backend.js'
import type { DeliveryAttempt, DeliveryHistory } from '../deliveries.js'
import type { JobListPage, JobListQuery } from '../listing.js'
import {
  emptyMinute,
  type JobSummary,
  LATENCY_BOUNDS_MS,
  MINUTE_MS,
  SUMMARY_MINUTES,
  summaryMinutes,
} from '../summary.js'
import {
  type Connection,
  type DriverName,
  inTransaction,
  openConnection,
  SQLITE_BUSY,
  SQLITE_CONSTRAINT_UNIQUE,
  sqliteCode,
} from './sqlite-driver.js'
import {
  type ClaimLimits,
  type Delivery,
  type DeliveryFactory,
  type DeliveryOutcome,
  DuplicateJobIdError,
  type JobEnd,
  type JobRecord,
  type JobState,
  type JobStore,
  lostRunsError,
  MAX_LOST_RUNS,
  type NewDelivery,
  type NewJob,
  StoreFullError,
  StoreUnavailableError,
} from './store.js'

export const DATABASE_FILE = 'jobs.sqlite3'

/** Each entry moves the schema one version up; `PRAGMA user_version` says how many have run. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE jobs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     id TEXT NOT NULL UNIQUE,
     algorithm TEXT NOT NULL,
     params TEXT NOT NULL,
     webhook TEXT,
     cheap INTEGER NOT NULL CHECK (cheap IN (0, 1)),
     status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
     created_at INTEGER NOT NULL,
     started_at INTEGER,
     completed_at INTEGER,
     result TEXT,
     error TEXT,
     metadata TEXT,
     runs INTEGER NOT NULL DEFAULT 0,
     lost_runs INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX jobs_pending ON jobs (seq) WHERE status = 'pending';
   CREATE INDEX jobs_running ON jobs (seq) WHERE status = 'running';
   CREATE INDEX jobs_finished ON jobs (completed_at) WHERE completed_at IS NOT NULL;
   CREATE TABLE deliveries (
     id TEXT PRIMARY KEY,
     job_id TEXT NOT NULL,
     url TEXT NOT NULL,
     payload TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'failed')),
     attempts INTEGER NOT NULL DEFAULT 0,
     next_at INTEGER NOT NULL,
     last_error TEXT,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX deliveries_due ON deliveries (next_at) WHERE status = 'pending';
   CREATE INDEX deliveries_sending ON deliveries (id) WHERE status = 'sending';
   CREATE INDEX deliveries_settled ON deliveries (updated_at) WHERE status IN ('delivered', 'failed');`,
  // Job control (issue 16). Listing newest first, with or without a status filter, walks an index; an
  // algorithm filter is checked on the rows walked (there are few algorithms, and one index fewer to
  // keep up on every write). Idempotency keys live as long as a job's retention after they are made.
  `CREATE INDEX jobs_created ON jobs (created_at DESC, id DESC);
   CREATE INDEX jobs_status_created ON jobs (status, created_at DESC, id DESC);
   CREATE TABLE idempotency_keys (
     key TEXT PRIMARY KEY,
     fingerprint TEXT NOT NULL,
     job_id TEXT NOT NULL,
     created_at INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX idempotency_created ON idempotency_keys (created_at);
   CREATE INDEX deliveries_job ON deliveries (job_id);
   CREATE TABLE delivery_attempts (
     delivery_id TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     at INTEGER NOT NULL,
     duration_ms REAL NOT NULL,
     status_code INTEGER,
     error TEXT,
     next_at INTEGER,
     PRIMARY KEY (delivery_id, attempt)
   ) WITHOUT ROWID;`,
  // The job summary (issue 16) from counters kept by triggers, in the transaction of each change, so
  // that reading it never scans jobs. job_counts: jobs by status (a TTL sweep's delete counts too).
  // job_minutes: job ends by minute of completed_at and latency bucket (summary.ts), one upsert an
  // end. Both start from the rows already there. The finished jobs' index gains the status, so that
  // those past their retention and not yet swept are counted on the index alone.
  `DROP INDEX jobs_finished;
   CREATE INDEX jobs_finished ON jobs (completed_at, status) WHERE completed_at IS NOT NULL;
   CREATE TABLE job_counts (status TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
   INSERT INTO job_counts (status, n)
     SELECT s.status, (SELECT count(*) FROM jobs WHERE jobs.status = s.status)
     FROM (SELECT 'pending' AS status UNION ALL SELECT 'running' UNION ALL SELECT 'completed'
           UNION ALL SELECT 'failed') s;
   CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs BEGIN
     UPDATE job_counts SET n = n + 1 WHERE status = NEW.status;
   END;
   CREATE TRIGGER jobs_count_update AFTER UPDATE OF status ON jobs WHEN OLD.status <> NEW.status BEGIN
     UPDATE job_counts SET n = n + (status = NEW.status) - (status = OLD.status)
     WHERE status IN (OLD.status, NEW.status);
   END;
   CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs BEGIN
     UPDATE job_counts SET n = n - 1 WHERE status = OLD.status;
   END;
   CREATE TABLE job_minutes (
     minute INTEGER NOT NULL,
     bucket INTEGER NOT NULL,
     completed INTEGER NOT NULL,
     failed INTEGER NOT NULL,
     latency_sum_ms INTEGER NOT NULL,
     PRIMARY KEY (minute, bucket)
   ) WITHOUT ROWID;
   INSERT INTO job_minutes (minute, bucket, completed, failed, latency_sum_ms)
     SELECT completed_at / 60000, ${latencyBucketSql('max(0, completed_at - created_at)')},
       sum(status = 'completed'), sum(status = 'failed'), sum(max(0, completed_at - created_at))
     FROM jobs INDEXED BY jobs_finished
     WHERE completed_at IS NOT NULL
       AND completed_at >= (CAST(strftime('%s', 'now') AS INTEGER) / 60 - ${SUMMARY_MINUTES}) * 60000
     GROUP BY 1, 2;
   CREATE TRIGGER jobs_ended AFTER UPDATE OF status ON jobs
   WHEN NEW.status IN ('completed', 'failed') AND OLD.status IN ('pending', 'running') BEGIN
     INSERT INTO job_minutes (minute, bucket, completed, failed, latency_sum_ms)
     VALUES (NEW.completed_at / 60000, ${latencyBucketSql('max(0, NEW.completed_at - NEW.created_at)')},
       NEW.status = 'completed', NEW.status = 'failed', max(0, NEW.completed_at - NEW.created_at))
     ON CONFLICT (minute, bucket) DO UPDATE SET completed = completed + excluded.completed,
       failed = failed + excluded.failed, latency_sum_ms = latency_sum_ms + excluded.latency_sum_ms;
   END;`,
]

/** SQL for the latency bucket of `latency` (ms): LATENCY_BOUNDS_MS's index, as latencyBucket(). */
function latencyBucketSql(latency: string): string {
  const cases = LATENCY_BOUNDS_MS.map((bound, i) => `WHEN ${latency} <= ${bound} THEN ${i}`)
  return `CASE ${cases.join(' ')} ELSE ${LATENCY_BOUNDS_MS.length} END`
}

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
}

interface DeliveryRow {
  id: string
  job_id: string
  url: string
  payload: string
  attempts: number
}

const JOB_COLUMNS =
  'id, algorithm, params, webhook, cheap, status, created_at, started_at, completed_at, result, error, metadata, ' +
  'runs, lost_runs'

export class SqliteJobStore implements JobStore {
  readonly #db: Connection
  readonly #ttlMs: number
  readonly #maxPending: number
  readonly #makeDelivery: DeliveryFactory
  // Kept in memory: this process is the file's only writer, and counting the index on every
  // POST /jobs would cost more than the insert.
  #pending: number
  readonly #sql

  private constructor(db: Connection, options: SqliteStoreOptions) {
    this.#db = db
    this.#ttlMs = options.ttlMs
    this.#maxPending = options.maxPending
    this.#makeDelivery = options.makeDelivery
    this.#sql = {
      insert: db.prepare(
        `INSERT INTO jobs (id, algorithm, params, webhook, cheap, status, created_at)
         VALUES (@id, @algorithm, @params, @webhook, @cheap, 'pending', @createdAt)`,
      ),
      read: db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`),
      nextPending: db.prepare(`SELECT seq, cheap FROM jobs WHERE status = 'pending' ORDER BY seq LIMIT ?`),
      start: db.prepare(
        `UPDATE jobs SET status = 'running', started_at = @now, runs = runs + 1 WHERE seq = @seq
         RETURNING ${JOB_COLUMNS}`,
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
         WHERE id = @id AND status = 'running' AND runs = @run`,
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
      running: db.prepare(`SELECT id, runs FROM jobs WHERE status = 'running'`),
      countPending: db.prepare(`SELECT count(*) AS n FROM jobs WHERE status = 'pending'`),
      countRunning: db.prepare(`SELECT count(*) AS n FROM jobs WHERE status = 'running'`),
      // The summary: the counters (migration 3), less the finished jobs past their retention that the
      // sweeper has not deleted yet (a read shows them as gone): at most one sweep's worth, on an index.
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
        `INSERT INTO deliveries (id, job_id, url, payload, status, next_at, updated_at)
         VALUES (@id, @jobId, @url, @payload, 'pending', @now, @now)`,
      ),
      claimDeliveries: db.prepare(
        `UPDATE deliveries SET status = 'sending', attempts = attempts + 1, updated_at = @now
         WHERE id IN (SELECT id FROM deliveries WHERE status = 'pending' AND next_at <= @now
                      ORDER BY next_at LIMIT @limit)
         RETURNING id, job_id, url, payload, attempts, next_at`,
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
      nextDelivery: db.prepare(`SELECT min(next_at) AS at FROM deliveries WHERE status = 'pending'`),
      settleDelivery: db.prepare(
        `UPDATE deliveries SET status = @status, next_at = @nextAt, last_error = @error, updated_at = @now,
           attempts = attempts - @uncount
         WHERE id = @id AND status = 'sending'`,
      ),
      unsendDeliveries: db.prepare(
        `UPDATE deliveries SET status = 'pending', attempts = attempts - 1 WHERE status = 'sending'`,
      ),
    }
    this.#pending = (this.#sql.countPending.get() as { n: number }).n
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

  async create(job: NewJob): Promise<void> {
    await this.submit(job)
  }

  /**
   * Adds a pending job as `create` does; with an Idempotency-Key, in the same transaction, records the
   * key, or gives the job the key made before (same fingerprint) or throws IdempotencyKeyReusedError.
   */
  async submit(job: NewJob, idempotency?: IdempotencyClaim): Promise<Submitted> {
    return this.#guard(() =>
      inTransaction(this.#db, () => {
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
          this.#sql.insert.run({ id, algorithm, params, webhook, cheap: job.cheap ? 1 : 0, createdAt })
        } catch (error) {
          if (sqliteCode(error) === SQLITE_CONSTRAINT_UNIQUE) throw new DuplicateJobIdError(job.id)
          throw error
        }
        if (idempotency !== undefined) {
          this.#sql.putKey.run({ ...idempotency, jobId: job.id, now: job.createdAt })
        }
        this.#pending++
        return { id: job.id, createdAt: job.createdAt, replayed: false }
      }),
    )
  }

  /** Fails a pending job as cancelled, scheduling its webhook; null when it is not pending. */
  async cancelPending(id: string, now: number): Promise<JobRecord | null> {
    return this.#guard(() =>
      inTransaction(this.#db, () => {
        const row = this.#sql.cancelPending.get({ id, now, error: JOB_CANCELLED }) as JobRow | undefined
        if (row === undefined) return null
        this.#pending--
        const record = toRecord(row)
        this.#schedule(this.#makeDelivery(record), now)
        return record
      }),
    )
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

  /** The delivery of job `job` and its attempts. */
  async deliveryHistory(job: JobRecord): Promise<DeliveryHistory> {
    return this.#guard(() => {
      if (job.webhook === null) return { jobId: job.id, url: null, state: 'none', attempts: [] }
      const delivery = this.#sql.deliveryOf.get(job.id) as
        | { id: string; url: string; status: string; attempts: number }
        | undefined
      if (delivery === undefined) return { jobId: job.id, url: job.webhook, state: 'waiting', attempts: [] }
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
      let state: DeliveryHistory['state'] = attempts.length === 0 ? 'waiting' : 'retrying'
      if (delivery.status === 'delivered' || delivery.status === 'failed') state = delivery.status
      return { jobId: job.id, url: delivery.url, state, attempts }
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
    return this.#guard(() =>
      inTransaction(this.#db, () => {
        const claimed: JobRecord[] = []
        let heavy = 0
        for (const { seq, cheap } of this.#sql.nextPending.all(limits.jobs) as {
          seq: number
          cheap: 0 | 1
        }[]) {
          if (!cheap && ++heavy > limits.heavy) break
          claimed.push(toRecord(this.#sql.start.get({ seq, now }) as JobRow))
        }
        this.#pending -= claimed.length
        return claimed
      }),
    )
  }

  async finish(end: JobEnd): Promise<boolean> {
    return this.#guard(() =>
      inTransaction(this.#db, () => {
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
      }),
    )
  }

  async release(id: string, run: number): Promise<void> {
    this.#guard(() => {
      if (this.#sql.release.run({ id, run }).changes > 0) this.#pending++
    })
  }

  async loseRun(id: string, run: number, now: number): Promise<JobState | null> {
    return this.#guard(() =>
      inTransaction(this.#db, () => {
        const row = this.#sql.lose.get({ id, run }) as JobRow | undefined
        if (row === undefined) return null
        return this.#afterLostRun(row, now)
      }),
    )
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

  async countPending(): Promise<number> {
    return this.#pending
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

  async countRunning(): Promise<number> {
    return this.#guard(() => (this.#sql.countRunning.get() as { n: number }).n)
  }

  async claimDeliveries(limit: number, now: number): Promise<Delivery[]> {
    if (limit <= 0) return []
    return this.#guard(() =>
      (this.#sql.claimDeliveries.all({ now, limit }) as (DeliveryRow & { next_at: number })[])
        .sort((a, b) => a.next_at - b.next_at)
        .map((row) => ({
          id: row.id,
          jobId: row.job_id,
          url: row.url,
          payload: row.payload,
          attempts: row.attempts,
        })),
    )
  }

  async nextDeliveryAt(): Promise<number | null> {
    return this.#guard(() => (this.#sql.nextDelivery.get() as { at: number | null }).at)
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
        // Cut short by a shutdown, or not made: due again (now by default), and the attempt does not count.
        settled.nextAt = outcome.nextAt ?? now
        settled.uncount = 1
        break
    }
    const record = outcome.kind === 'released' ? undefined : outcome.record
    this.#guard(() =>
      inTransaction(this.#db, () => {
        if (this.#sql.settleDelivery.run(settled).changes > 0 && record !== undefined) {
          this.#sql.insertAttempt.run({ deliveryId: id, ...record })
        }
      }),
    )
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
    if (this.#db.open) this.#db.close()
  }

  /** At start: runs left `running` by a dead process are lost; so are attempts left `sending`. */
  #recover(now: number): void {
    inTransaction(this.#db, () => {
      for (const { id, runs } of this.#sql.running.all() as { id: string; runs: number }[]) {
        const row = this.#sql.lose.get({ id, run: runs }) as JobRow
        this.#afterLostRun(row, now)
      }
      this.#sql.unsendDeliveries.run()
    })
  }

  /** `row` was just put back to pending with one more lost run: it waits, or fails for good. */
  #afterLostRun(row: JobRow, now: number): JobState {
    if (row.lost_runs < MAX_LOST_RUNS) {
      this.#pending++
      return 'pending'
    }
    const failed = this.#sql.failLost.get({ id: row.id, now, error: lostRunsError(row.lost_runs) }) as JobRow
    this.#schedule(this.#makeDelivery(toRecord(failed)), now)
    return 'failed'
  }

  #schedule(delivery: NewDelivery | null, now: number): void {
    if (delivery === null) return
    const { id, jobId, url, payload } = delivery
    this.#sql.insertDelivery.run({ id, jobId, url, payload, now })
  }

  /** SQLite's own failures (disk full, I/O error, a closed database) make the store unavailable. */
  #guard<T>(work: () => T): T {
    try {
      return work()
    } catch (error) {
      if (
        error instanceof StoreFullError ||
        error instanceof DuplicateJobIdError ||
        error instanceof IdempotencyKeyReusedError
      ) {
        throw error
      }
      throw new StoreUnavailableError('The job store failed.', { cause: error })
    }
  }
}

function migrate(db: Connection): void {
  const { user_version: version } = db.prepare('PRAGMA user_version').get() as { user_version: number }
  if (version > MIGRATIONS.length) {
    throw new Error(
      `The job store has schema version ${version}, newer than this version of algoserve knows ` +
        `(${MIGRATIONS.length}); run a newer algoserve or use another data directory.`,
    )
  }
  inTransaction(db, () => {
    for (let next = version; next < MIGRATIONS.length; next++) db.exec(MIGRATIONS[next] as string)
    db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`)
  })
}

function toRecord(row: JobRow): JobRecord {
  return {
    id: row.id,
    algorithm: row.algorithm,
    params: row.params,
    webhook: row.webhook,
    cheap: row.cheap === 1,
    status: row.status,
    createdAt: row.created_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    result: row.result,
    error: row.error,
    metadata: row.metadata,
    runs: row.runs,
    lostRuns: row.lost_runs,
  }
}

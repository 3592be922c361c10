// Version 2: job control. Listing newest first, with or without a status filter, walks an index; an
// algorithm filter is checked on the rows walked (there are few algorithms, and one index fewer to keep
// up on every write). Idempotency keys live as long as a job's retention after they are made. Each
// delivery attempt is kept for GET /jobs/{job_id}/deliveries.
export const V2_JOB_CONTROL = `CREATE INDEX jobs_created ON jobs (created_at DESC, id DESC);
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
   ) WITHOUT ROWID;`

// Version 1 (release 1.0.0): jobs, and the webhook delivery of each job that has one.
export const V1_JOBS = `CREATE TABLE jobs (
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
   CREATE INDEX deliveries_settled ON deliveries (updated_at) WHERE status IN ('delivered', 'failed');`

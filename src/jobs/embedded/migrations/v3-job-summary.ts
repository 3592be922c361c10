// Version 3: the job summary, from counters kept by triggers in the transaction of each change, so that
// reading it never scans jobs. job_counts: jobs by status (a TTL sweep's delete counts too).
// job_minutes: job ends by minute of completed_at and latency bucket (summary.ts), one upsert an end.
// Both start from the rows already there. The finished jobs' index gains the status, so that those past
// their retention and not yet swept are counted on the index alone.
import { LATENCY_BOUNDS_MS, SUMMARY_MINUTES } from '../../summary.js'

/** SQL for the latency bucket of `latency` (ms): LATENCY_BOUNDS_MS's index, as latencyBucket(). */
function latencyBucketSql(latency: string): string {
  const cases = LATENCY_BOUNDS_MS.map((bound, i) => `WHEN ${latency} <= ${bound} THEN ${i}`)
  return `CASE ${cases.join(' ')} ELSE ${LATENCY_BOUNDS_MS.length} END`
}

export const V3_JOB_SUMMARY = `DROP INDEX jobs_finished;
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
   END;`

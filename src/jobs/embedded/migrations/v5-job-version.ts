// Version 5: the version of its algorithm each job is pinned to (docs/jobs.md, versions). A job of an
// earlier release that completed takes the version its metadata names (the one that ran it); a pending or
// running one has none (NULL) until the store is opened by a process that loads its algorithm, which pins
// it to that algorithm's default (SqliteJobStore.open); a failed one keeps none.
export const V5_JOB_VERSION = `ALTER TABLE jobs ADD COLUMN version TEXT;
   UPDATE jobs SET version = CASE WHEN json_valid(metadata) THEN
       CASE WHEN json_type(metadata, '$.version') = 'text' THEN json_extract(metadata, '$.version') END END
     WHERE metadata IS NOT NULL;`

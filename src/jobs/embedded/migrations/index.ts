// The embedded store's schema, one file per version: each moves the schema one version up, and
// `PRAGMA user_version` says how many have run. A new version is a new file at the end of the table;
// a released one never changes (data directories it made must keep opening).
import { type Connection, inTransaction } from '../sqlite-driver.js'
import { V1_JOBS } from './v1-jobs.js'
import { V2_JOB_CONTROL } from './v2-job-control.js'
import { V3_JOB_SUMMARY } from './v3-job-summary.js'
import { V4_TRACE_CONTEXT } from './v4-trace-context.js'
import { V5_JOB_VERSION } from './v5-job-version.js'

export const MIGRATIONS: readonly string[] = [
  V1_JOBS,
  V2_JOB_CONTROL,
  V3_JOB_SUMMARY,
  V4_TRACE_CONTEXT,
  V5_JOB_VERSION,
]

/** Brings `db` to the latest version, in one transaction; refuses a schema newer than this code's. */
export function migrate(db: Connection): void {
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

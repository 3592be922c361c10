// The version a job runs on: the one it was pinned to when it was created (JobRecord's `version`). Only
// a job that a release before versions stored has none: the embedded store pins such jobs as it opens;
// on Redis they run on the default version (docs/jobs.md, versions).
import type { Algorithm } from '../algorithms/algorithm.js'
import { type Registry, versionKey } from '../algorithms/registry.js'
import type { JobRecord } from './job.js'

/** The `version` of a job that has none yet. */
export const UNPINNED = ''

/**
 * The loaded algorithm a job runs on: exactly its pinned version (the default for a job that has none),
 * or none when that is not loaded here.
 */
export const pinnedAlgorithm = (
  algorithms: Registry,
  job: Pick<JobRecord, 'algorithm' | 'version'>,
): Algorithm | undefined =>
  job.version === UNPINNED
    ? algorithms.defaultOf(job.algorithm)
    : algorithms.exact(job.algorithm, job.version)

/** The key of a job's version (its lanes, its concurrency): versionKey. */
export const jobVersionKey = (job: Pick<JobRecord, 'algorithm' | 'version'>): string =>
  versionKey(job.algorithm, job.version)

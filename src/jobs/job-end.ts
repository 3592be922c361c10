// What tells a job's runs apart once it has ended: the process that ran it and the run's number, in its
// metadata (completed jobs) and in the one line logged where it ran at each end that a run stored.
import { hostname } from 'node:os'
import type { FastifyBaseLogger } from 'fastify'
import type { JobEndStatus } from './backend.js'

/** This process, as a job's metadata and its end's log line name it: the host (a container's name), pid. */
export const WORKER = `${hostname()}:${process.pid}`

/** A job end stored by a run in this process. */
export interface JobEnd {
  id: string
  algorithm: string
  /** The version it ran on, where the backend tells (else the default of its algorithm is logged). */
  version?: string
  status: JobEndStatus
  /** The run's number: 1 for the first, counting every run started again (a worker died, a shutdown). */
  attempt: number
  /** The run's time, from its start to its end, in ms. */
  durationMs: number
}

export type LogJobEnd = (end: JobEnd) => void

/** Logs each job end at info, with what an operator matches to the job and to this process's other lines. */
export function jobEndLog(
  log: FastifyBaseLogger,
  versionOf: (algorithm: string) => string | null,
): LogJobEnd {
  return (end) =>
    log.info(
      {
        job_id: end.id,
        algorithm: end.algorithm,
        version: end.version ?? versionOf(end.algorithm),
        status: end.status,
        attempt: end.attempt,
        duration_ms: end.durationMs,
        worker: WORKER,
      },
      `job ${end.status}`,
    )
}

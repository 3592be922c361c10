// The header that names the version of an algorithm an answer is about: the version that served a
// synchronous call, and the version a job is pinned to, on POST /jobs's 202 and on GET /jobs/{job_id}
// (docs/algorithms.md, versions). No body changes: the interface's shapes are exact.
import type { FastifyReply } from 'fastify'
import { UNPINNED } from '../jobs/pinned.js'

export const ALGORITHM_VERSION = 'algorithm-version'

/** Names `version` on the answer; a job that has none yet (an earlier release's) names none. */
export function versionHeaders(reply: FastifyReply, version: string): void {
  if (version !== UNPINNED) reply.header(ALGORITHM_VERSION, version)
}

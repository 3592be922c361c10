// The headers that say which version of an algorithm an answer is about: `Algorithm-Version`, the version
// that served a synchronous call or the one a job is pinned to (POST /jobs's 202, GET /jobs/{job_id}),
// and, for a version the operator deprecated, RFC 9745's `Deprecation` and RFC 8594's `Sunset`. No body
// changes: the interface's shapes are exact. The one place that rule lives; the policy is the app's
// (registerVersionPolicy).
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { VersionPolicy } from '../algorithms/version-policy.js'
import { UNPINNED } from '../jobs/pinned.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Which versions are deprecated (ALGOSERVE_DEPRECATED_VERSIONS). */
    versionPolicy: VersionPolicy
  }
}

export const ALGORITHM_VERSION = 'algorithm-version'

/** Makes `policy` the one versionHeaders consults, for every route of `app`. */
export function registerVersionPolicy(app: FastifyInstance, policy: VersionPolicy): void {
  app.decorate('versionPolicy', policy)
}

/**
 * Sets the headers of the version that serves this request, or that a job is pinned to; a job that has
 * none yet (stored by a release before versions) names none.
 */
export function versionHeaders(reply: FastifyReply, algorithm: { name: string; version: string }): void {
  if (algorithm.version === UNPINNED) return
  reply.header(ALGORITHM_VERSION, algorithm.version)
  const deprecation = reply.server.versionPolicy.deprecation(algorithm)
  if (deprecation === undefined) return
  // A structured-field date: unix seconds after an @.
  reply.header('deprecation', `@${deprecation.since.getTime() / 1000}`)
  if (deprecation.sunset !== null) reply.header('sunset', deprecation.sunset.toUTCString())
}

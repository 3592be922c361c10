// The headers that say which version of an algorithm answered: `Algorithm-Version` on every synchronous
// call and on a job's 202 and reads, and, for a version the operator deprecated, RFC 9745's `Deprecation`
// and RFC 8594's `Sunset`. The one place that rule lives; the policy is the app's (registerVersionPolicy).
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { VersionPolicy } from '../algorithms/version-policy.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Which versions are deprecated (ALGOSERVE_DEPRECATED_VERSIONS). */
    versionPolicy: VersionPolicy
  }
}

/** Makes `policy` the one versionHeaders consults, for every route of `app`. */
export function registerVersionPolicy(app: FastifyInstance, policy: VersionPolicy): void {
  app.decorate('versionPolicy', policy)
}

/** Sets the headers of the version that serves this request. */
export function versionHeaders(reply: FastifyReply, algorithm: { name: string; version: string }): void {
  reply.header('algorithm-version', algorithm.version)
  const deprecation = reply.server.versionPolicy.deprecation(algorithm)
  if (deprecation === undefined) return
  // A structured-field date: unix seconds after an @.
  reply.header('deprecation', `@${deprecation.since.getTime() / 1000}`)
  if (deprecation.sunset !== null) reply.header('sunset', deprecation.sunset.toUTCString())
}

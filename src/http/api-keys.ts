// Opt-in API keys (off by default: the interface has no authentication). The service keeps only SHA-256
// hashes of the keys it accepts; a request's key is hashed and compared with every accepted hash in
// constant time, and neither the key nor its hash is ever logged.
import { createHash, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type Config, keyHashes } from '../config.js'
import { UnauthorizedError } from '../errors.js'
import type { RouteDeclaration, RouteKind } from './route-declaration.js'

/** Every accepted hash, from the setting and the file, as bytes. */
export function acceptedKeyHashes(config: Config): Buffer[] {
  const fromFile = config.apiKeysFile === null ? [] : keyHashes(readFileSync(config.apiKeysFile, 'utf8'))
  return [...new Set([...config.apiKeys, ...fromFile])].map((hex) => Buffer.from(hex, 'hex'))
}

/**
 * Which routes need a key under these settings, by their declared kind: the API always; /metrics and
 * the documentation when the settings say so; health, the dashboard's static files and preflights never.
 */
export function keyRequired(config: Config): (route: RouteDeclaration) => boolean {
  const required: Record<RouteKind, boolean> = {
    api: true,
    metrics: config.apiKeysForMetrics,
    docs: config.apiKeysForDocs,
    health: false,
    dashboard: false,
    preflight: false,
  }
  return (route) => required[route.kind]
}

const BEARER = /^Bearer[ \t]+([^ \t]+)[ \t]*$/i

/** The client a request is counted as (for rate limits): the hash of its accepted key. */
const clients = new WeakMap<FastifyRequest, string>()
export const authenticatedClient = (request: FastifyRequest): string | undefined => clients.get(request)

/**
 * Requires `Authorization: Bearer <key>` on the routes that need a key: the check is added to those
 * routes alone, as they are registered, so the others pay nothing. Unknown paths stay 404 or 405.
 */
export function requireApiKeys(
  app: FastifyInstance,
  accepted: readonly Buffer[],
  isRequired: (route: RouteDeclaration) => boolean,
): void {
  const checkApiKey = async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization
    const key = header === undefined ? undefined : BEARER.exec(header)?.[1]
    if (key === undefined) throw new UnauthorizedError(header !== undefined)
    const hash = createHash('sha256').update(key).digest()
    // No early exit: the time taken does not depend on which hash, if any, matched.
    let match = false
    for (const candidate of accepted) match = timingSafeEqual(hash, candidate) || match
    if (!match) throw new UnauthorizedError(true)
    clients.set(request, hash.toString('hex'))
  }
  app.addHook('onRoute', (route) => {
    if (route.config === undefined || !isRequired(route.config)) return
    // First among the route's own hooks: the rate limit counts the client the key names.
    route.onRequest = [checkApiKey, ...[route.onRequest ?? []].flat()]
  })
}

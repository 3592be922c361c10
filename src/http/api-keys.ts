// Opt-in API keys (off by default: the interface has no authentication). The service keeps only SHA-256
// hashes of the keys it accepts; a request's key is hashed and compared with every accepted hash in
// constant time, and neither the key nor its hash is ever logged.
import { createHash, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type Config, keyHashes } from '../config.js'
import { UnauthorizedError } from '../errors.js'

/** Every accepted hash, from the setting and the file, as bytes. */
export function acceptedKeyHashes(config: Config): Buffer[] {
  const fromFile = config.apiKeysFile === null ? [] : keyHashes(readFileSync(config.apiKeysFile, 'utf8'))
  return [...new Set([...config.apiKeys, ...fromFile])].map((hex) => Buffer.from(hex, 'hex'))
}

/**
 * Which paths need a key: the API always; /metrics and the documentation when the settings say so;
 * the dashboard's static files never.
 */
export function protectedPaths(config: Config): (path: string) => boolean {
  return (path) => {
    if (path === '/healthz' || path === '/readyz') return false
    // The dashboard's page and assets hold no data; its script sends the user's key with each call.
    if (path === '/dashboard' || path.startsWith('/dashboard/')) return false
    if (path === '/metrics') return config.apiKeysForMetrics
    if (path === '/openapi.json' || path.startsWith('/docs') || path.startsWith('/redoc')) {
      return config.apiKeysForDocs
    }
    return true
  }
}

const BEARER = /^Bearer[ \t]+([^ \t]+)[ \t]*$/i

/** The client a request is counted as (for rate limits): the hash of its accepted key. */
const clients = new WeakMap<FastifyRequest, string>()
export const authenticatedClient = (request: FastifyRequest): string | undefined => clients.get(request)

/** Requires `Authorization: Bearer <key>` on every protected route; unknown paths stay 404. */
export function requireApiKeys(
  app: FastifyInstance,
  accepted: readonly Buffer[],
  isProtected: (path: string) => boolean,
): void {
  app.addHook('onRequest', async (request) => {
    const route = request.routeOptions.url
    // Preflights carry no credentials (CORS answers them), and unmatched paths answer 404 or 405.
    if (route === undefined || request.method === 'OPTIONS' || !isProtected(route)) return
    const header = request.headers.authorization
    const key = header === undefined ? undefined : BEARER.exec(header)?.[1]
    if (key === undefined) throw new UnauthorizedError(header !== undefined)
    const hash = createHash('sha256').update(key).digest()
    // No early exit: the time taken does not depend on which hash, if any, matched.
    let match = false
    for (const candidate of accepted) match = timingSafeEqual(hash, candidate) || match
    if (!match) throw new UnauthorizedError(true)
    clients.set(request, hash.toString('hex'))
  })
}

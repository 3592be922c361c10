// The job dashboard at /dashboard: a page, its stylesheet, its script's ES modules and lossless-json's
// browser build, all served from this process (no CDN, no framework, no build step). The page holds no
// data, so it needs no API key (its kind, route-declaration.ts); its script calls the API with the key
// the user gives it.
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { FastifyInstance, FastifyReply } from 'fastify'

const require = createRequire(import.meta.url)
// public/ sits one folder above both src/routes/ and dist/routes/.
const PUBLIC = new URL('../../public/', import.meta.url)
const DASHBOARD = new URL('dashboard/', PUBLIC)

/** Forbids every source but this service: no external script, style, image, font or connection. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

interface Asset {
  path: string
  type: string
  body: string
}

function assets(): Asset[] {
  const own = (name: string) => readFileSync(new URL(name, DASHBOARD), 'utf8')
  // The UMD build defines the global LosslessJSON; its source map is not served, so no link to it.
  const losslessJson = readFileSync(require.resolve('lossless-json'), 'utf8').replace(
    /\/\/# sourceMappingURL=\S+\s*$/,
    '\n',
  )
  return [
    { path: '/dashboard', type: 'text/html; charset=utf-8', body: own('index.html') },
    { path: '/dashboard/dashboard.css', type: 'text/css; charset=utf-8', body: own('dashboard.css') },
    // dashboard.js and every module it imports: each .js file of the folder, so a new module is served.
    ...readdirSync(DASHBOARD)
      .filter((name) => name.endsWith('.js'))
      .sort()
      .map((name) => ({
        path: `/dashboard/${name}`,
        type: 'application/javascript; charset=utf-8',
        body: own(name),
      })),
    {
      path: '/dashboard/lossless-json.js',
      type: 'application/javascript; charset=utf-8',
      body: losslessJson,
    },
    {
      path: '/dashboard/favicon.svg',
      type: 'image/svg+xml',
      body: readFileSync(new URL('favicon.svg', PUBLIC), 'utf8'),
    },
  ]
}

function send(reply: FastifyReply, asset: Asset): FastifyReply {
  return (
    reply
      .type(asset.type)
      .header('content-security-policy', DASHBOARD_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      // Small files that change with a release: the browser asks again each time (a 304 is not worth it).
      .header('cache-control', 'no-cache')
      .send(asset.body)
  )
}

export async function dashboardRoutes(app: FastifyInstance): Promise<void> {
  for (const asset of assets()) {
    app.get(asset.path, { config: { kind: 'dashboard' }, schema: { hide: true } }, async (_request, reply) =>
      send(reply, asset),
    )
  }
}

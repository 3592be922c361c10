// The OpenAPI document and its two readers, Swagger UI (/docs) and ReDoc (/redoc). Every asset they
// load is served from this process, so they work on a machine with no internet.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'

const require = createRequire(import.meta.url)
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js')

const DESCRIPTION = `Algorithms over HTTP. PrimeChecker tests an integer of any size for primality and factors it.

* Numbers are read exactly: JSON integer literals of any length, or strings of decimal digits.
* The primality method depends on |number|: trial division below 2^32, deterministic Miller-Rabin below 2^64,
  Baillie-PSW above.
* Error bodies: flat on /invoke, wrapped under \`detail\` on /jobs; 422 bodies follow FastAPI with pydantic v2.
* Every response carries \`x-request-id\`.
* Runs on the maintained Node.js lines: 22, 24 and 26 (and still on 20, past its end of life in April 2026).`

/** Registers @fastify/swagger; must come before the routes it documents. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Algoserve',
        version: '1.0.0',
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
    },
    // Shared schemas keep their $id (the interface's names) as component names.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // The documentation pages are paths of the interface too; their plugin registers them hidden.
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject
      return { ...document.openapiObject, paths: { ...document.openapiObject.paths, ...DOC_PATHS } }
    },
  })
}

const html = (summary: string) => ({
  get: {
    summary,
    responses: {
      200: {
        description: 'An HTML page; every asset it loads is served here.',
        content: { 'text/html': {} },
      },
    },
  },
})

const DOC_PATHS = {
  '/docs': html('Interactive API documentation (Swagger UI)'),
  '/redoc': html('Alternative API documentation (ReDoc)'),
  '/openapi.json': {
    get: {
      summary: 'This OpenAPI document',
      responses: { 200: { description: 'OpenAPI 3.1.', content: { 'application/json': {} } } },
    },
  },
}

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true },
    staticCSP: true,
  })

  // Read on first use: most processes never serve it, and it is a megabyte.
  let redocBundle: string | undefined
  app.get('/redoc', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', REDOC_CSP).send(REDOC_PAGE),
  )
  app.get('/redoc/redoc.standalone.js', { schema: { hide: true } }, async (_request, reply) => {
    redocBundle ??= readFileSync(REDOC_BUNDLE, 'utf8').replace(REDOC_CDN_LOGO, EMPTY_IMAGE)
    return reply
      .type('application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .send(redocBundle)
  })
}

// ReDoc's sidebar always shows a logo from its vendor's CDN: the bundle is served with an empty image in
// its place, and the page's policy keeps the browser from fetching anything outside this service.
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg'
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"

const REDOC_CSP = [
  "default-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "worker-src 'self' blob:",
  "font-src 'self' data:",
].join('; ')

const REDOC_PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Algoserve - ReDoc</title>
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <redoc spec-url="/openapi.json"></redoc>
  <script src="/redoc/redoc.standalone.js"></script>
</body>
</html>
`

// The OpenAPI document and its two readers, Swagger UI (/docs) and ReDoc (/redoc). Every asset they
// load is served from this process, so they work on a machine with no internet.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import type { Registry } from '../algorithms/registry.js'
import { completeDocument, type DocumentOptions, documentInfo, pageTitle } from '../http/openapi.js'
import type { RouteDeclaration, RouteDeclarations } from '../http/route-declaration.js'
import { WebhookPayload } from '../http/schemas.js'

const require = createRequire(import.meta.url)
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js')
// public/ sits one folder above both src/routes/ and dist/routes/.
const PUBLIC = new URL('../../public/', import.meta.url)
const SWAGGER_UI_EXTRAS = new URL('swagger-ui-extras.js', PUBLIC)
const FAVICON = readFileSync(new URL('favicon.svg', PUBLIC))

/**
 * Gives the completed document of an app serving `algorithms`, built as this one was, when the set
 * changed since it was last built (a reload): a version or name the reload added gets its own operation,
 * from its own schemas, as it would at a start.
 */
export type DocumentOf = (algorithms: Registry) => Promise<Record<string, unknown>>

/** Brings the document up to date with the algorithms served, if a reload changed them. */
export type RefreshDocument = () => Promise<void>

/**
 * Registers @fastify/swagger; must come before the routes it documents. Without `documentOf` the document
 * stays as it was built at the start.
 */
export async function registerOpenApi(
  app: FastifyInstance,
  options: DocumentOptions,
  documentOf?: DocumentOf,
): Promise<RefreshDocument> {
  // Only documented (the callback's body): it is a component for the document's webhooks section.
  app.addSchema(WebhookPayload)
  // The declaration of each documented route, by operationId: read back when the document is completed.
  const declarations = new Map<string, RouteDeclaration>()
  const declarationOf = (operationId: string | undefined) => {
    const declaration = declarations.get(operationId ?? '')
    if (declaration === undefined) throw new Error(`no route declaration for operation ${operationId}`)
    return declaration
  }
  // The document is built once, at its first read, and kept by @fastify/swagger, which hands out this
  // very object: after a reload it is replaced in place, at the next read, by the document of an app
  // built for the new set (routes cannot be added to a running app; the new versions are served by the
  // parametric routes).
  let completed: Record<string, unknown> | undefined
  // The set the routes were registered for.
  let builtFor = options.algorithms.generation
  let building: Promise<void> | undefined
  const refresh: RefreshDocument = () => {
    const { algorithms } = options
    if (documentOf === undefined || builtFor === algorithms.generation) return Promise.resolve()
    app.swagger()
    building ??= (async () => {
      const generation = algorithms.generation
      const next = await documentOf(algorithms.snapshot())
      if (completed === undefined) return
      for (const key of Object.keys(completed)) delete completed[key]
      Object.assign(completed, next)
      builtFor = generation
    })().finally(() => {
      building = undefined
    })
    return building
  }
  await app.register(swagger, {
    openapi: documentInfo(options.text, options.algorithms),
    // Shared schemas keep their $id (the interface's names) as component names.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: ({ schema, url, route }) => {
      const operationId = (schema as { operationId?: string } | undefined)?.operationId
      if (operationId !== undefined && route.config !== undefined) declarations.set(operationId, route.config)
      return { schema, url }
    },
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject
      completed = completeDocument(document.openapiObject as Record<string, unknown>, declarationOf, options)
      return completed
    },
  })
  return refresh
}

export interface DocsRouteOptions {
  declarations: RouteDeclarations
  /** The document's title, version and description, as the settings give them. */
  text: DocumentOptions['text']
  refreshDocument: RefreshDocument
}

export async function docsRoutes(app: FastifyInstance, options: DocsRouteOptions): Promise<void> {
  const config = { kind: 'docs' } as const
  const title = escapeHtml(pageTitle(options.text))
  const redocPage = REDOC_PAGE.replace('{title}', () => title)
  app.get('/openapi.json', { config, schema: { hide: true } }, async () => {
    await options.refreshDocument()
    return app.swagger()
  })

  // Swagger UI's own routes (its page, its assets, its copies of the document) are documentation too, and
  // its copies are as fresh as /openapi.json.
  await options.declarations.registering(config, () =>
    app.register(async (scope) => {
      scope.addHook('onRequest', async () => options.refreshDocument())
      await scope.register(swaggerUi, {
        routePrefix: '/docs',
        uiConfig: {
          // The operations without Swagger's own top bar and its logo.
          layout: 'BaseLayout',
          deepLinking: true,
          displayOperationId: true,
          persistAuthorization: true,
          plugins: [browserExpression('window.AlgoserveSwaggerUi.plugin')],
        },
        theme: {
          title,
          favicon: [
            { filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: FAVICON },
          ],
          js: [{ filename: 'swagger-ui-extras.js', content: readFileSync(SWAGGER_UI_EXTRAS, 'utf8') }],
        },
        // The plugin's own policy says upgrade-insecure-requests, which blanks the page on a plain-HTTP
        // host name other than localhost: every asset is asked for over https.
        staticCSP: DOCS_CSP,
      })
    }),
  )

  // Read on first use: most processes never serve it, and it is a megabyte.
  let redocBundle: string | undefined
  app.get('/redoc', { config, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', REDOC_CSP).send(redocPage),
  )
  app.get('/redoc/redoc.standalone.js', { config, schema: { hide: true } }, async (_request, reply) => {
    redocBundle ??= readFileSync(REDOC_BUNDLE, 'utf8').replace(REDOC_CDN_LOGO, EMPTY_IMAGE)
    return reply
      .type('application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .send(redocBundle)
  })
}

/** Text as it may stand in an HTML element (the pages' titles). */
const escapeHtml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;')

/**
 * A value @fastify/swagger-ui writes into its page as this JavaScript expression (it writes functions by
 * their source): here a name defined by swagger-ui-extras.js, which the page loads before it starts.
 */
function browserExpression(expression: string): () => object {
  return Object.assign(() => ({}), { toString: () => expression })
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

const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
].join('; ')

const REDOC_PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{title} - ReDoc</title>
  <link rel="icon" type="image/svg+xml" href="/docs/static/theme/favicon.svg">
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <redoc spec-url="/openapi.json"></redoc>
  <script src="/redoc/redoc.standalone.js"></script>
</body>
</html>
`

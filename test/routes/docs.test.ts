import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { startApp, type TestApp } from '../helpers/app.js'

let server: TestApp
before(async () => {
  server = await startApp()
})
after(() => server.close())

type Document = {
  openapi: string
  info: { version: string; title: string }
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
  components: { schemas: Record<string, unknown> }
}

describe('GET /openapi.json', () => {
  let document: Document
  before(async () => {
    const response = await fetch(`${server.url}/openapi.json`)
    assert.equal(response.status, 200)
    document = (await response.json()) as Document
  })

  test('is OpenAPI 3.1 with interface version 1.0.0', () => {
    assert.match(document.openapi, /^3\.1\./)
    assert.equal(document.info.version, '1.0.0')
  })

  test('names its components as the interface does', () => {
    for (const name of [
      'InvokeRequest',
      'InvokeResponse',
      'JobRequest',
      'JobCreateResponse',
      'JobStatusResponse',
      'JobStatus',
      'ErrorResponse',
      'HTTPValidationError',
      'ValidationError',
      'HealthResponse',
      'ReadinessResponse',
    ]) {
      assert.ok(name in document.components.schemas, name)
    }
    assert.ok(!Object.keys(document.components.schemas).some((name) => name.startsWith('def-')))
  })

  test('has every path, method and status code of the interface', () => {
    const expected: Record<string, Record<string, string[]>> = {
      '/invoke': { post: ['200', '400', '413', '422', '500', '503'] },
      '/jobs': { post: ['202', '400', '404', '413', '422', '503'] },
      '/jobs/{job_id}': { get: ['200', '404', '422', '503'] },
      '/healthz': { get: ['200'] },
      '/readyz': { get: ['200', '503'] },
      '/metrics': { get: ['200'] },
      '/docs': { get: ['200'] },
      '/redoc': { get: ['200'] },
      '/openapi.json': { get: ['200'] },
    }
    assert.deepEqual(Object.keys(document.paths).sort(), Object.keys(expected).sort())
    for (const [path, methods] of Object.entries(expected)) {
      for (const [method, statuses] of Object.entries(methods)) {
        const operation = document.paths[path]?.[method]
        assert.ok(operation, `${method} ${path}`)
        assert.deepEqual(Object.keys(operation.responses).sort(), statuses, `${method} ${path}`)
      }
    }
  })
})

/** Every asset a page names: all must be on this server, and all must answer 200. */
async function assertAssetsLocal(page: string) {
  const response = await fetch(`${server.url}${page}`)
  assert.equal(response.status, 200)
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/)
  const html = await response.text()
  const assets = [...html.matchAll(/(?:src|href|spec-url)="([^"]+)"/g)].map((m) => m[1] as string)
  assert.ok(assets.length > 0, `${page} names its assets`)
  for (const asset of assets) {
    const target = new URL(asset, `${server.url}${page}`)
    assert.equal(target.origin, server.url, `${page} loads ${asset} from elsewhere`)
    const fetched = await fetch(target)
    assert.equal(fetched.status, 200, `${page}: ${asset}`)
    await fetched.arrayBuffer()
  }
  return html
}

describe('documentation pages', () => {
  test('GET /docs is Swagger UI with every asset served here', async () => {
    const html = await assertAssetsLocal('/docs')
    assert.match(html, /swagger-ui/)
    const spec = await fetch(`${server.url}/docs/json`)
    assert.equal(spec.status, 200)
  })

  test('GET /redoc is ReDoc with every asset served here', async () => {
    const html = await assertAssetsLocal('/redoc')
    assert.match(html, /<redoc spec-url="\/openapi.json">/)
  })

  test('both pages render in a browser with no request leaving the service', async (t) => {
    const chromium = '/usr/bin/chromium'
    if (!existsSync(chromium)) {
      t.skip('SKIPPED: no browser at /usr/bin/chromium (apt-get install chromium)')
      return
    }
    const { chromium: launcher } = await import('playwright-core')
    const browser = await launcher.launch({
      executablePath: chromium,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
      ],
    })
    try {
      const pages: [string, string][] = [
        ['/docs', '.swagger-ui .info .title'],
        ['/redoc', '.api-info h1'],
      ]
      for (const [path, selector] of pages) {
        const page = await browser.newPage()
        const elsewhere: string[] = []
        page.on('request', (request) => {
          const target = new URL(request.url())
          if (target.protocol !== 'data:' && target.protocol !== 'blob:' && target.origin !== server.url) {
            elsewhere.push(request.url())
          }
        })
        await page.goto(`${server.url}${path}`)
        const title = await page.locator(selector).first().textContent({ timeout: 15_000 })
        assert.match(title ?? '', /Algoserve/, path)
        assert.deepEqual(elsewhere, [], `${path} made requests outside the service`)
        await page.close()
      }
    } finally {
      await browser.close()
    }
  })
})

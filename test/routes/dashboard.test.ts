// /dashboard over HTTP, on each job backend: the page and every file it loads come from the service
// with a policy that forbids any other source; nothing in them points elsewhere; they need no API key,
// while the API they call still does. (test/routes/dashboard-browser.test.ts drives the page in
// Chromium.)
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { DASHBOARD_CSP } from '../../src/routes/dashboard.js'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'

/** The files the page names in src= and href=, in order. */
const referenced = (html: string) => [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)

/** Every module `entry` imports, directly or not, as paths under /dashboard/ (none relative to another). */
async function imported(url: string, entry: string): Promise<string[]> {
  const found: string[] = []
  const pending = [entry]
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    const body = await (await fetch(`${url}${path}`)).text()
    for (const [, name] of body.matchAll(/^import [^']* from '\.\/([a-z-]+\.js)'$/gm)) {
      const module = `/dashboard/${name}`
      if (!found.includes(module) && module !== entry) {
        found.push(module)
        pending.push(module)
      }
    }
  }
  return found.sort()
}

forEachBackend((backend) => {
  describe('the dashboard without keys', () => {
    let server: TestApp
    before(async () => {
      server = await backend.start()
    })
    after(() => server.close())

    test('the page is HTML with a policy that allows this service only', async () => {
      const response = await fetch(`${server.url}/dashboard`)
      assert.equal(response.status, 200)
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8')
      const policy = response.headers.get('content-security-policy') ?? ''
      assert.equal(policy, DASHBOARD_CSP)
      assert.match(policy, /default-src 'none'/)
      for (const directive of ['script-src', 'style-src', 'connect-src']) {
        assert.match(policy, new RegExp(`${directive} 'self'(;|$)`), directive)
      }
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff')
      const html = await response.text()
      assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/)
      assert.doesNotMatch(
        html,
        /<script>|<style>| style="/,
        'no inline script or style: the policy forbids them',
      )
    })

    test('every file the page loads is served, with the policy, and points nowhere else', async () => {
      const html = await (await fetch(`${server.url}/dashboard`)).text()
      const files = referenced(html)
      assert.deepEqual(files, [
        '/dashboard/favicon.svg',
        '/dashboard/dashboard.css',
        '/dashboard/lossless-json.js',
        '/dashboard/dashboard.js',
      ])
      // The page's script is a module: the files it imports, and theirs, are loaded too.
      const modules = await imported(server.url, '/dashboard/dashboard.js')
      assert.deepEqual(
        modules,
        [
          'api.js',
          'dom.js',
          'event-stream.js',
          'format.js',
          'job-list.js',
          'job-panel.js',
          'messages.js',
          'overview.js',
          'refresh.js',
          'result-view.js',
          'state.js',
        ].map((name) => `/dashboard/${name}`),
      )
      for (const file of ['/dashboard', ...files, ...modules]) {
        const response = await fetch(`${server.url}${file}`)
        assert.equal(response.status, 200, file)
        assert.equal(response.headers.get('content-security-policy'), DASHBOARD_CSP, file)
        if (file.endsWith('.js'))
          assert.equal(response.headers.get('content-type'), 'application/javascript; charset=utf-8', file)
        const body = await response.text()
        // The SVG namespace is a name, not an address anything is fetched from.
        const addresses = body
          .replace(/http:\/\/www\.w3\.org\/2000\/svg/g, '')
          .match(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/gi)
        assert.equal(addresses, null, `${file} names ${addresses}`)
      }
      const script = await (await fetch(`${server.url}/dashboard/lossless-json.js`)).text()
      assert.ok(script.includes('.LosslessJSON='), 'the browser build, defining the global')
      assert.ok(!script.includes('sourceMappingURL'), 'no link to a source map that is not served')
    })

    test('the page is not an operation of the OpenAPI document', async () => {
      const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: object }
      assert.ok(!Object.keys(document.paths).some((path) => path.startsWith('/dashboard')))
    })
  })

  test('with API keys set, the page and its files need none; the API it calls does', async () => {
    const server = await backend.start({ apiKeys: [createHash('sha256').update('dash-key').digest('hex')] })
    try {
      const html = await (await fetch(`${server.url}/dashboard`)).text()
      for (const file of ['/dashboard', ...referenced(html)]) {
        assert.equal((await fetch(`${server.url}${file}`)).status, 200, file)
      }
      assert.equal((await fetch(`${server.url}/jobs/0123456789ab`)).status, 401)
      const keyed = await fetch(`${server.url}/jobs/0123456789ab`, {
        headers: { authorization: 'Bearer dash-key' },
      })
      assert.equal(keyed.status, 404)
      // Only the dashboard's own paths are open: a neighbour is not.
      assert.equal((await fetch(`${server.url}/dashboardx`)).status, 404)
    } finally {
      await server.close()
    }
  })
})

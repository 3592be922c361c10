// /docs and /redoc in a real browser, reached by a host name over plain HTTP, with user algorithms
// loaded beside PrimeChecker (two whose schemas refer to parts of themselves): they render every operation,
// with no console error and no request leaving the service; every "Try it out" default succeeds, the user
// algorithm's too; integers above 2^53 stay exact in Swagger UI. Screenshots go to a temporary folder, named
// in the test output.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { moduleSource, REFERRING_MODULES, validMembers, writeModules } from '../helpers/algorithms.js'
import { startApp, type TestApp } from '../helpers/app.js'
import { hasBrowser, launchBrowser, NO_BROWSER, TEST_HOST, watchPage } from '../helpers/browser.js'

const OPERATIONS: [tag: string, operationId: string, status: string][] = [
  ['algorithms', 'invoke', '200'],
  ['algorithms', 'listAlgorithms', '200'],
  ['algorithms', 'getAlgorithm', '200'],
  ['algorithms', 'invoke_Adder', '200'],
  // Schemas that refer to parts of themselves: Swagger UI follows the references to fill in the body.
  ['algorithms', 'invoke_Tree', '200'],
  ['algorithms', 'invoke_Graph', '200'],
  ['algorithms', 'invoke_PrimeChecker', '200'],
  ['jobs', 'createJob', '202'],
  // After createJob: the page fills in the id of the job it created.
  ['jobs', 'getJob', '200'],
  ['operations', 'healthz', '200'],
  ['operations', 'readyz', '200'],
  ['operations', 'metrics', '200'],
]
const BIG = '18446744073709551617'

const modules = writeModules({ 'adder.mjs': moduleSource(validMembers('Adder')), ...REFERRING_MODULES })
let server: TestApp
let browser: Browser | undefined
let origin: string
let screenshots: string

before(async () => {
  server = await startApp({ algorithms: [modules.dir] })
  origin = `http://${TEST_HOST}:${new URL(server.url).port}`
  screenshots = mkdtempSync(join(tmpdir(), 'algoserve-docs-screenshots-'))
  if (hasBrowser()) browser = await launchBrowser()
})
after(async () => {
  await browser?.close()
  await server.close()
  modules.remove()
})

async function openPage(path: string) {
  assert.ok(browser)
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const watch = watchPage(page, origin)
  await page.goto(`${origin}${path}`)
  return { page, watch }
}

async function screenshot(page: Page, name: string, t: { diagnostic(message: string): void }) {
  const path = join(screenshots, name)
  await page.screenshot({ path, fullPage: true })
  t.diagnostic(`screenshot: ${path}`)
}

/** Opens one Swagger UI operation, presses Try it out, and returns it. */
async function tryItOut(page: Page, tag: string, operationId: string): Promise<Locator> {
  const operation = page.locator(`#operations-${tag}-${operationId}`)
  await operation.locator('.opblock-summary').first().click()
  await operation.getByRole('button', { name: 'Try it out' }).click()
  return operation
}

async function execute(operation: Locator): Promise<{ status: string; body: string; curl: string }> {
  await operation.getByRole('button', { name: 'Execute' }).click()
  const live = operation.locator('.live-responses-table .response').first()
  await live.waitFor({ timeout: 15_000 })
  return {
    status: ((await live.locator('.response-col_status').textContent()) ?? '').trim(),
    body: (await live.locator('.response-col_description pre').first().textContent()) ?? '',
    curl: (await operation.locator('.curl-command').textContent()) ?? '',
  }
}

describe('the documentation in a browser, by host name over plain HTTP', {
  skip: !hasBrowser() && NO_BROWSER,
}, () => {
  test('Swagger UI renders every operation and the webhook, with no error and nothing fetched elsewhere', async (t) => {
    const { page, watch } = await openPage('/docs')
    for (const [tag, operationId] of OPERATIONS) {
      await page.locator(`#operations-${tag}-${operationId}`).waitFor({ timeout: 15_000 })
    }
    assert.equal(await page.title(), 'Algoserve API')
    assert.match((await page.locator('.info .title').textContent()) ?? '', /^Algoserve/)
    assert.equal(await page.locator('.topbar').count(), 0, "Swagger's top bar and logo are not shown")
    await page.getByText('jobFinished', { exact: true }).first().waitFor()
    // The favicon is ours and loads: a missing one is a console error.
    const icon = await page.locator('link[rel="icon"]').getAttribute('href')
    assert.match(icon ?? '', /favicon\.svg$/)
    await screenshot(page, 'swagger-ui.png', t)
    assert.deepEqual(watch.problems, [])
    assert.deepEqual(watch.elsewhere, [])
    await page.close()
  })

  test('ReDoc renders every operation and the webhook, with no error and nothing fetched elsewhere', async (t) => {
    const { page, watch } = await openPage('/redoc')
    await page.locator('.api-info h1').waitFor({ timeout: 15_000 })
    for (const [, operationId] of [...OPERATIONS, ['jobs', 'jobFinished']]) {
      await page.locator(`[data-section-id="operation/${operationId}"]`).waitFor({ timeout: 15_000 })
    }
    assert.match((await page.locator('.api-info h1').textContent()) ?? '', /^Algoserve/)
    await screenshot(page, 'redoc.png', t)
    assert.deepEqual(watch.problems, [])
    assert.deepEqual(watch.elsewhere, [])
    await page.close()
  })

  test('every "Try it out" default succeeds', async (t) => {
    const { page, watch } = await openPage('/docs')
    for (const [tag, operationId, status] of OPERATIONS) {
      const operation = await tryItOut(page, tag, operationId)
      const result = await execute(operation)
      assert.equal(result.status, status, `${operationId}: ${result.body}`)
    }
    await screenshot(page, 'swagger-ui-try-it-out.png', t)
    assert.deepEqual(watch.problems, [])
    assert.deepEqual(watch.elsewhere, [])
    await page.close()
  })

  test(`Try it out with ${BIG} (above 2^53) keeps every digit in the request and the response`, async (t) => {
    const { page, watch } = await openPage('/docs')
    const sent: string[] = []
    page.on('request', (request) => {
      if (request.method() === 'POST') sent.push(request.postData() ?? '')
    })
    const operation = await tryItOut(page, 'algorithms', 'invoke')
    await operation.locator('textarea.body-param__text').fill(`{"number": ${BIG}}`)
    const result = await execute(operation)
    assert.equal(result.status, '200')
    assert.deepEqual(sent, [`{"number": ${BIG}}`])
    assert.ok(result.curl.includes(BIG), result.curl)
    assert.match(result.body, new RegExp(`"number": ${BIG},`))
    assert.ok(!result.body.includes('18446744073709552000'), result.body)
    // From the request (curl) to the live response: where the digits show.
    const top = await operation.locator('.curl-command').boundingBox()
    const bottom = await operation.locator('.live-responses-table').boundingBox()
    assert.ok(top && bottom)
    const path = join(screenshots, 'swagger-ui-big-integer.png')
    const height = bottom.y + bottom.height - top.y
    // Bounding boxes are relative to the viewport, a full-page clip to the page.
    const scrolled = await page.evaluate(() => (globalThis as unknown as { scrollY: number }).scrollY)
    await page.screenshot({ path, fullPage: true, clip: { x: 0, y: top.y + scrolled, width: 1280, height } })
    t.diagnostic(`screenshot: ${path}`)
    assert.deepEqual(watch.problems, [])
    await page.close()
  })
})

// /dashboard with two versions of one algorithm, in headless Chromium against a real service: each job's
// version in the list and in its detail, and the version filter, whose choices are the picked algorithm's
// versions (default and deprecated marked) and which keeps the jobs of one version.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import { startApp, type TestApp } from '../helpers/app.js'
import { hasBrowser, launchBrowser, NO_BROWSER, TEST_HOST, watchPage } from '../helpers/browser.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { until } from '../helpers/time.js'

const at = (version: string) => moduleSource(validMembers('Sum', undefined, version))

describe('the dashboard with versions', { skip: !hasBrowser() && NO_BROWSER }, () => {
  const modules = writeModules({ 'a.mjs': at('1.0.0'), 'b.mjs': at('2.0.0') })
  let browser: Browser
  let server: TestApp
  const ids: string[] = []

  before(async () => {
    server = await startApp({
      algorithms: [modules.dir],
      defaultVersions: new Map([['Sum', [{ version: '1.0.0', weight: 1 }]]]),
      deprecatedVersions: new Map([['Sum@1.0.0', { sunset: null }]]),
    })
    browser = await launchBrowser()
    for (const a of [1, 2]) {
      const id = (await createJob(server.url, { algorithm: 'Sum', params: { a, b: 1 } })).json
        .job_id as string
      assert.equal((await waitForJob(server.url, id)).status, 'completed')
      ids.push(id)
    }
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    modules.remove()
  })

  const rows = (page: Page) => page.locator('#job-table tbody tr')

  test("each job's version, and the filter by version of the algorithm picked", async () => {
    const origin = `http://${TEST_HOST}:${new URL(server.url).port}`
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const watch = watchPage(page, origin)
    await page.goto(`${origin}/dashboard`)
    await until(async () => (await rows(page).count()) === 2, 15_000, 'the list shows 2 jobs', 100)
    const versions = await page.locator('#job-table tbody td[data-label="Version"]').allTextContents()
    assert.deepEqual(versions, ['1.0.0', '1.0.0'])
    assert.equal(await page.locator('#version-filter').isDisabled(), true)

    await page.locator('#algorithm-filter').selectOption('Sum')
    assert.equal(await page.locator('#version-filter').isDisabled(), false)
    assert.deepEqual(await page.locator('#version-filter option').allTextContents(), [
      'all',
      '2.0.0',
      '1.0.0 (default, deprecated)',
    ])
    await page.locator('#version-filter').selectOption('2.0.0')
    await page.locator('#no-jobs').filter({ hasText: 'No jobs of Sum 2.0.0.' }).waitFor()
    await page.locator('#version-filter').selectOption('1.0.0')
    await until(async () => (await rows(page).count()) === 2, 15_000, 'the 1.0.0 jobs', 100)

    await rows(page).first().click()
    await page.locator('#detail-fields dt', { hasText: 'Version' }).waitFor()
    const fields = await page.locator('#detail-fields dt, #detail-fields dd').allTextContents()
    assert.equal(fields[fields.indexOf('Version') + 1], '1.0.0')
    assert.deepEqual(watch.problems, [])
    assert.deepEqual(watch.elsewhere, [])
    await page.close()
  })
})

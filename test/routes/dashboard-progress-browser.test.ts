// The progress of running jobs on /dashboard, in headless Chromium against a real service on each job
// backend, with API keys on and a process algorithm that reports progress at each step
// (test/fixtures/stepping-process): a bar in the list (from GET /jobs, at the page's refresh) and a live
// bar in the open job (GET /jobs/{id}/events read with fetch, the key in its header), both rising, then
// the job shown completed once its end arrives. No console error, no request leaving the service. A
// screenshot of the running job goes to a temporary folder, named in the test output.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, Locator } from 'playwright-core'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { hasBrowser, launchBrowser, NO_BROWSER, TEST_HOST, watchPage } from '../helpers/browser.js'
import { until } from '../helpers/time.js'

const STEPPING = fileURLToPath(new URL('../fixtures/stepping-process', import.meta.url))
const KEY = 'dashboard-progress-key-5c1d'
const STEPS = 40

let browser: Browser | undefined
before(async () => {
  if (hasBrowser()) browser = await launchBrowser()
})
after(() => browser?.close())

/** The bar's value (aria-valuenow) once it is past `above`: polled, as the page's policy forbids eval. */
const risesAbove = (bar: Locator, above: number, what: string) =>
  until(
    async () => {
      const now = Number(await bar.getAttribute('aria-valuenow'))
      return now > above ? now : false
    },
    20_000,
    `${what} rises above ${above}%`,
    100,
  )

describe("running jobs' progress on the dashboard", { skip: !hasBrowser() && NO_BROWSER }, () => {
  forEachBackend((backend) => {
    let server: TestApp
    before(async () => {
      server = await backend.start({
        algorithms: [STEPPING],
        apiKeys: [createHash('sha256').update(KEY).digest('hex')],
      })
    })
    after(() => server.close())

    test('a bar in the list and a live one in the job, rising, then the job as it ended', async (t) => {
      assert.ok(browser)
      const created = await fetch(`${server.url}/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ algorithm: 'Stepping', params: { steps: STEPS, step_ms: 400 } }),
      })
      assert.equal(created.status, 202)
      const id = String(((await created.json()) as { job_id: string }).job_id)

      const origin = `http://${TEST_HOST}:${new URL(server.url).port}`
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      const watch = watchPage(page, origin)
      await page.goto(`${origin}/dashboard`)
      await page.locator('#key-form').waitFor()
      await page.locator('#key-input').fill(KEY)
      await page.getByRole('button', { name: 'Use key' }).click()

      // The list: the running job's bar, at the page's refresh (every 5 s).
      const listed = page.locator(`#job-table tbody tr[data-job-id="${id}"] [role="progressbar"]`)
      await listed.waitFor({ timeout: 20_000 })
      assert.equal(await listed.getAttribute('aria-label'), `Progress of job ${id}`)
      assert.equal(await listed.getAttribute('aria-valuemin'), '0')
      assert.equal(await listed.getAttribute('aria-valuemax'), '100')
      const first = Number(await listed.getAttribute('aria-valuenow'))
      assert.match(
        (await listed.getAttribute('aria-valuetext')) ?? '',
        new RegExp(`^${first}%: step \\d+ of ${STEPS}$`),
      )
      const cell = page.locator(`#job-table tbody tr[data-job-id="${id}"] .progress`)
      assert.equal(await cell.locator('.progress-value').textContent(), `${first}%`)
      assert.match((await cell.getAttribute('title')) ?? '', new RegExp(`^step \\d+ of ${STEPS}$`))
      await risesAbove(listed, first, "the list's bar")

      // The open job: its bar follows the events, well within a refresh.
      await page.locator(`#job-table tbody tr[data-job-id="${id}"] .job-link`).click()
      const live = page.locator('#detail-progress [role="progressbar"]')
      await live.waitFor()
      const seen = [await risesAbove(live, 0, "the job's bar")]
      for (let i = 0; i < 3; i++) seen.push(await risesAbove(live, seen.at(-1) as number, "the job's bar"))
      const shot = join(
        mkdtempSync(join(tmpdir(), 'algoserve-dashboard-progress-')),
        `${backend.name}-running.png`,
      )
      await page.screenshot({ path: shot, fullPage: true })
      t.diagnostic(`screenshot: ${shot}`)
      assert.match(
        (await page.locator('#detail-progress-state').textContent()) ?? '',
        new RegExp(`^step \\d+ of ${STEPS}$`),
      )

      // The end event shows the job completed, its result, and takes the bar away.
      await page.locator('#detail-fields .badge.completed').waitFor({ timeout: 30_000 })
      assert.ok(await page.locator('#detail-progress').isHidden())
      assert.match(
        (await page.locator('#detail-result').textContent()) ?? '',
        new RegExp(`"steps": ${STEPS}`),
      )
      assert.ok(await page.locator('#cancel-job').isDisabled())
      // The only problems are the 401s before the key was given: the events were read with it.
      assert.ok(
        watch.problems.every((p) => p.includes('status of 401')),
        watch.problems.join('\n'),
      )
      assert.deepEqual(watch.elsewhere, [])
      await page.close()
    })
  })
})

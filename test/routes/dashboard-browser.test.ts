// /dashboard in headless Chromium, reached by a host name over plain HTTP, against a real service (on
// each job backend) with real jobs (and a real webhook receiver): counts and charts, the status filter,
// paging, a job's detail with every digit of a 600-digit number, its deliveries, cancelling a running
// job, the self-refresh, a phone-width layout, and the API key asked for when keys are set. No console
// error, no request leaving the service. Screenshots go to a temporary folder, named in the test output
// (each name starts with the backend's).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { hasBrowser, launchBrowser, NO_BROWSER, TEST_HOST, watchPage } from '../helpers/browser.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { BIG_600, PRIME_599, RSA_100 } from '../helpers/numbers.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { until } from '../helpers/time.js'

const DESKTOP = { width: 1280, height: 900 }
const PHONE = { width: 390, height: 844 }

let screenshots: string
let browser: Browser | undefined

before(async () => {
  screenshots = mkdtempSync(join(tmpdir(), 'algoserve-dashboard-screenshots-'))
  if (hasBrowser()) browser = await launchBrowser()
})
after(() => browser?.close())

async function screenshot(page: Page, name: string, t: { diagnostic(message: string): void }) {
  const path = join(screenshots, name)
  await page.screenshot({ path, fullPage: true })
  t.diagnostic(`screenshot: ${path}`)
}

const originOf = (server: TestApp) => `http://${TEST_HOST}:${new URL(server.url).port}`

async function open(server: TestApp, viewport = DESKTOP, hash = '') {
  assert.ok(browser)
  const page = await browser.newPage({ viewport })
  const watch = watchPage(page, originOf(server))
  await page.goto(`${originOf(server)}/dashboard${hash}`)
  return { page, watch }
}

const rows = (page: Page) => page.locator('#job-table tbody tr')
const row = (page: Page, id: string) => page.locator(`#job-table tbody tr[data-job-id="${id}"]`)
/**
 * Waits until the list shows exactly `count` jobs. (Polled from here: Playwright's waitForFunction
 * polls with eval in the page, which the page's policy rightly forbids.)
 */
const rowCount = (page: Page, count: number) =>
  until(async () => (await rows(page).count()) === count, 15_000, `the list shows ${count} jobs`, 100)
const jobIds = (page: Page) =>
  rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job-id')))

describe('the dashboard in a browser', { skip: !hasBrowser() && NO_BROWSER }, () => {
  forEachBackend((backend) => {
    let server: TestApp
    let receiver: Receiver
    const ids: Record<'prime' | 'composite' | 'big' | 'heavy', string> = {
      prime: '',
      composite: '',
      big: '',
      heavy: '',
    }

    before(async () => {
      receiver = await startReceiver(() => 204)
      // RSA-100 keeps its job running for the whole (long) budget, until the dashboard cancels it.
      server = await backend.start({ jobFactorBudgetMs: 120_000, webhookAllowPrivate: true })
      const create = async (number: string | number, webhook?: string) => {
        const { status, json } = await createJob(server.url, {
          algorithm: 'PrimeChecker',
          params: { number },
          ...(webhook === undefined ? {} : { webhook }),
        })
        assert.equal(status, 202)
        return String(json.job_id)
      }
      ids.prime = await create(97, receiver.url)
      ids.composite = await create(91)
      ids.big = await create(BIG_600)
      for (const id of [ids.prime, ids.composite, ids.big]) await waitForJob(server.url, id)
      await receiver.waitFor(1)
      ids.heavy = await create(RSA_100)
      await waitForJob(server.url, ids.heavy, (job) => job.status === 'running')
    })
    after(async () => {
      await server.close()
      await receiver.close()
    })

    test('overview: counts by state, throughput and latency charts; the list newest first', async (t) => {
      const { page, watch } = await open(server)
      await rows(page).first().waitFor()
      assert.deepEqual(await jobIds(page), [ids.heavy, ids.big, ids.composite, ids.prime])
      assert.equal(await page.locator('#count-completed').textContent(), '3')
      assert.equal(await page.locator('#count-running').textContent(), '1')
      assert.equal(await page.locator('#count-pending').textContent(), '0')
      assert.equal(await page.locator('#count-failed').textContent(), '0')
      assert.match(
        (await page.locator('#sample-note').textContent()) ?? '',
        /^Counted over all 4 jobs the service keeps\.$/,
      )
      assert.match(
        (await page.locator('#throughput-summary').textContent()) ?? '',
        /^3 ended in 15 min \([0-9.]+\/min\): 3 completed, 0 failed or cancelled$/,
      )
      assert.match(
        (await page.locator('#latency-summary').textContent()) ?? '',
        /^median ≈ [0-9.]+ (ms|s), p95 ≈ [0-9.]+ (ms|s), mean [0-9.]+ (ms|s)$/,
      )
      // Jobs of milliseconds: the axis is in ms, and so is the caption.
      assert.equal(await page.locator('#latency-unit').textContent(), 'ms')
      assert.match(
        (await page.locator('#latency-chart text.label').first().textContent()) ?? '',
        /^[0-9.]+ ms$/,
      )
      // Three jobs ended within the last minute or two: one or two bars, and a latency point each.
      assert.ok((await page.locator('#throughput-chart rect.bar-completed').count()) >= 1)
      assert.ok((await page.locator('#latency-chart circle.dot').count()) >= 1)
      // A long number is cut in the list, with its length.
      assert.equal(
        await row(page, ids.big).locator('td[data-label="Result"]').textContent(),
        `${BIG_600.slice(0, 10)}…(600 digits)`,
      )
      await screenshot(page, `${backend.name}-desktop-overview.png`, t)
      assert.deepEqual(watch.problems, [])
      assert.deepEqual(watch.elsewhere, [])
      await page.close()
    })

    test("counts, ends per minute and latency are the service's summary, not the listed jobs", async (t) => {
      // The summary answered as if the service kept 5,000 more completed jobs than it lists, which
      // ended this minute after 1 to 2 s each: the page shows the summary's numbers.
      assert.ok(browser)
      const page = await browser.newPage({ viewport: DESKTOP })
      const watch = watchPage(page, originOf(server))
      // The minutes with completed jobs in the last summary the page was given: the real jobs may have
      // ended in the minute before the one the 5,000 are added to.
      let minutesWithEnds = 0
      await page.route('**/job-summary', async (route) => {
        // Read from the service here: the browser alone resolves the test host name.
        const summary = (await (await fetch(`${server.url}/job-summary`)).json()) as {
          counts: Record<string, number>
          latency_bounds_ms: number[]
          ended_per_minute: { completed: number; latency_ms: { buckets: number[]; sum: number } }[]
        }
        summary.counts.completed = (summary.counts.completed ?? 0) + 5000
        const current = summary.ended_per_minute.at(-1)
        if (current) {
          current.completed += 5000
          const bucket = summary.latency_bounds_ms.indexOf(2000)
          current.latency_ms.buckets[bucket] = (current.latency_ms.buckets[bucket] ?? 0) + 5000
          current.latency_ms.sum += 5000 * 1500
        }
        minutesWithEnds = summary.ended_per_minute.filter((minute) => minute.completed > 0).length
        await route.fulfill({ json: summary })
      })
      await page.goto(`${originOf(server)}/dashboard`)
      await page
        .locator('#count-completed')
        .filter({ hasText: /^5003$/ })
        .waitFor()
      assert.equal(await page.locator('#count-running').textContent(), '1')
      assert.match((await page.locator('#throughput-summary').textContent()) ?? '', /^5003 ended in 15 min/)
      // Medians of seconds: the axis is in s, and so is the caption.
      assert.equal(await page.locator('#latency-unit').textContent(), 's')
      assert.match(
        (await page.locator('#latency-chart text.label').first().textContent()) ?? '',
        /^[0-9.]+ s$/,
      )
      assert.equal(
        await page.locator('#sample-note').textContent(),
        'Counted over all 5004 jobs the service keeps.',
      )
      // Read from the buckets: the three real jobs (milliseconds) and 5,000 in 1 to 2 s, so the median
      // is a little under half way in that bucket, and the p95 near its top.
      assert.match(
        (await page.locator('#latency-summary').textContent()) ?? '',
        /^median ≈ 1\.50 s, p95 ≈ 1\.95 s, mean 1\.[0-9]{2} s$/,
      )
      assert.ok(minutesWithEnds >= 1)
      assert.equal(await page.locator('#throughput-chart rect.bar-completed').count(), minutesWithEnds)
      await screenshot(page, `${backend.name}-desktop-summary.png`, t)
      await page.setViewportSize(PHONE)
      await screenshot(page, `${backend.name}-phone-summary.png`, t)
      assert.deepEqual(watch.problems, [])
      await page.close()
    })

    test('the status filter shows only jobs in that state', async () => {
      const { page, watch } = await open(server)
      await rows(page).first().waitFor()
      await page.locator('#status-filter').selectOption('completed')
      await rowCount(page, 3)
      assert.deepEqual(await jobIds(page), [ids.big, ids.composite, ids.prime])
      const badges = await page.locator('#job-table tbody .badge').allTextContents()
      assert.deepEqual(badges, ['completed', 'completed', 'completed'])
      await page.locator('#status-filter').selectOption('pending')
      await page.locator('#no-jobs').waitFor()
      assert.equal(await page.locator('#no-jobs').textContent(), 'No pending jobs.')
      assert.equal(await rows(page).count(), 0)
      assert.deepEqual(watch.problems, [])
      await page.close()
    })

    test("a job's detail: every digit of a 600-digit number and its factors, timestamps, no webhook", async (t) => {
      const { page, watch } = await open(server)
      await row(page, ids.big).click()
      await page.locator('#detail-result').filter({ hasText: PRIME_599 }).waitFor()
      const result = (await page.locator('#detail-result').textContent()) ?? ''
      assert.ok(result.includes(`"number": ${BIG_600}`), result.slice(0, 200))
      assert.ok(result.includes(`    3,\n    ${PRIME_599}\n`), 'both factors, exact')
      assert.ok(((await page.locator('#detail-params').textContent()) ?? '').includes(BIG_600))
      assert.equal(await page.locator('#detail-id').textContent(), ids.big)
      const fields = await page.locator('#detail-fields').textContent()
      assert.match(fields ?? '', /Created\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00Started/)
      assert.equal(await page.locator('#delivery-state').textContent(), 'No webhook for this job.')
      assert.ok(await page.locator('#cancel-job').isDisabled(), 'a completed job cannot be cancelled')
      assert.equal(new URL(page.url()).hash, `#job=${ids.big}`)
      await screenshot(page, `${backend.name}-desktop-detail-600-digits.png`, t)
      assert.deepEqual(watch.problems, [])
      await page.close()
    })

    test('delivery history of a job with a webhook, opened from its address', async () => {
      const { page, watch } = await open(server, DESKTOP, `#job=${ids.prime}`)
      await page.locator('#delivery-table tbody tr').first().waitFor()
      assert.match(
        (await page.locator('#delivery-state').textContent()) ?? '',
        /^Delivered\. \(http:\/\/127\.0\.0\.1:/,
      )
      const cells = await page.locator('#delivery-table tbody tr').first().locator('td').allTextContents()
      assert.equal(cells[0], '1')
      assert.equal(cells[3], '204')
      assert.equal(cells[4], '—')
      assert.deepEqual(watch.problems, [])
      await page.close()
    })

    test('cancelling a running job: asked first, then the job failed as cancelled, in the detail, the list and the counts', async (t) => {
      const { page, watch } = await open(server)
      await row(page, ids.heavy).click()
      await page.locator('#detail .badge.running').waitFor()
      assert.ok(await page.locator('#cancel-job').isEnabled())
      // Asked, and told no: nothing is cancelled.
      const asked: string[] = []
      page.once('dialog', (dialog) => {
        asked.push(`${dialog.type()}: ${dialog.message()}`)
        void dialog.dismiss()
      })
      await page.locator('#cancel-job').click()
      await until(() => asked.length === 1, 5000, 'the page asks')
      assert.match(asked[0] ?? '', new RegExp(`^confirm: Cancel job ${ids.heavy}\\?`))
      assert.ok(await page.locator('#cancel-job').isEnabled())
      const still = (await (await fetch(`${server.url}/jobs/${ids.heavy}`)).json()) as { status: string }
      assert.equal(still.status, 'running')
      // Asked again, and told yes.
      page.once('dialog', (dialog) => void dialog.accept())
      await page.locator('#cancel-job').click()
      await page.locator('#detail .badge.failed').waitFor({ timeout: 10_000 })
      assert.match((await page.locator('#detail-fields').textContent()) ?? '', /The job was cancelled\./)
      assert.ok(await page.locator('#cancel-job').isDisabled())
      await row(page, ids.heavy).locator('.badge.failed').waitFor()
      await page.locator('#count-failed').filter({ hasText: /^1$/ }).waitFor()
      await page
        .locator('#throughput-summary')
        .filter({ hasText: /: 3 completed, 1 failed or cancelled$/ })
        .waitFor()
      const job = (await (await fetch(`${server.url}/jobs/${ids.heavy}`)).json()) as {
        status: string
        error: string
      }
      assert.deepEqual([job.status, job.error], ['failed', 'The job was cancelled.'])
      await screenshot(page, `${backend.name}-desktop-cancelled.png`, t)
      assert.deepEqual(watch.problems, [])
      await page.close()
    })

    test('the page refreshes itself: a job created after it loaded shows up', async () => {
      const { page, watch } = await open(server)
      await rows(page).first().waitFor()
      const before = await rows(page).count()
      const { json } = await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: 101 } })
      await row(page, String(json.job_id)).waitFor({ timeout: 12_000 })
      assert.equal(await rows(page).count(), before + 1)
      assert.deepEqual(watch.problems, [])
      await page.close()
    })

    test('paging: Older and Newer walk the list 20 jobs at a time', async () => {
      for (let i = 0; i < 20; i++)
        await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: 1000 + i } })
      const all: string[] = []
      const { page, watch } = await open(server)
      await rowCount(page, 20)
      all.push(...((await jobIds(page)) as string[]))
      assert.ok(await page.locator('#newer').isDisabled())
      await page.locator('#older').click()
      await page.locator('#page-info').filter({ hasText: 'Page 2' }).waitFor()
      await rowCount(page, 5)
      all.push(...((await jobIds(page)) as string[]))
      assert.ok(await page.locator('#older').isDisabled(), 'the last page')
      assert.equal(new Set(all).size, 25, 'every job once')
      assert.deepEqual(all.slice(-4), [ids.heavy, ids.big, ids.composite, ids.prime])
      await page.locator('#newer').click()
      await page.locator('#page-info').filter({ hasText: 'Page 1' }).waitFor()
      assert.deepEqual(await jobIds(page), all.slice(0, 20))
      assert.deepEqual(watch.problems, [])
      await page.close()
    })

    test('on a phone (390 px): one column, nothing wider than the screen, a job opens above the list', async (t) => {
      const { page, watch } = await open(server, PHONE)
      await rows(page).first().waitFor()
      await screenshot(page, `${backend.name}-phone-list.png`, t)
      const width = () =>
        page.evaluate(
          () =>
            (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
              .documentElement.scrollWidth,
        )
      assert.ok((await width()) <= PHONE.width, `page is ${await width()} px wide`)
      // The last job of the page, far down the list: its detail comes into view, above the list.
      await rows(page).last().locator('.job-link').click()
      await page.locator('#detail-fields .badge').waitFor()
      assert.ok(await page.locator('#detail').isVisible())
      const detail = await page.locator('#detail').boundingBox()
      const list = await page.locator('#jobs').boundingBox()
      assert.ok(detail && list && detail.y < list.y, 'the open job sits above the list')
      assert.ok(detail.y >= 0 && detail.y < PHONE.height, `the open job is in view (y ${detail.y})`)
      await page.screenshot({ path: join(screenshots, `${backend.name}-phone-detail-in-view.png`) })
      // The 600-digit job, opened from its address: its digits wrap inside the screen.
      await page.goto(`${originOf(server)}/dashboard#job=${ids.big}`)
      await page.locator('#detail-result').filter({ hasText: PRIME_599 }).waitFor()
      assert.ok((await width()) <= PHONE.width, `page with a job open is ${await width()} px wide`)
      await screenshot(page, `${backend.name}-phone-detail.png`, t)
      assert.deepEqual(watch.problems, [])
      assert.deepEqual(watch.elsewhere, [])
      await page.close()
    })
  })
})

describe('the dashboard of a service with API keys', { skip: !hasBrowser() && NO_BROWSER }, () => {
  forEachBackend((backend) => {
    const KEY = 'dashboard-key-71f2'
    let server: TestApp
    before(async () => {
      server = await backend.start({ apiKeys: [createHash('sha256').update(KEY).digest('hex')] })
    })
    after(() => server.close())

    test('asks for the key, keeps it for the tab and sends it; a wrong key is said to be wrong', async (t) => {
      const { page, watch } = await open(server)
      await page.locator('#key-form').waitFor()
      assert.equal(await page.locator('#key-reason').textContent(), 'This service needs an API key.')
      await screenshot(page, `${backend.name}-desktop-key-asked.png`, t)
      await page.locator('#key-input').fill('not-the-key')
      await page.getByRole('button', { name: 'Use key' }).click()
      await page.locator('#key-reason').filter({ hasText: 'The API key was not accepted.' }).waitFor()
      await page.locator('#key-input').fill(KEY)
      await page.getByRole('button', { name: 'Use key' }).click()
      await page
        .locator('#count-pending')
        .filter({ hasText: /^[0-9]+$/ })
        .waitFor()
      assert.ok(await page.locator('#key-form').isHidden())
      assert.ok(await page.locator('#message').isHidden())
      assert.equal(
        await page.evaluate(() =>
          (
            globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }
          ).sessionStorage.getItem('algoserve-api-key'),
        ),
        KEY,
      )
      // A reload in the same tab keeps the key.
      await page.reload()
      await page
        .locator('#count-pending')
        .filter({ hasText: /^[0-9]+$/ })
        .waitFor()
      await screenshot(page, `${backend.name}-desktop-with-key.png`, t)
      // The only problems are the 401s before the key was right.
      assert.ok(
        watch.problems.every((p) => p.includes('status of 401')),
        watch.problems.join('\n'),
      )
      assert.deepEqual(watch.elsewhere, [])
      await page.close()
    })
  })
})

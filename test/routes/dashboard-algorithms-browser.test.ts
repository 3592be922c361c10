// /dashboard with algorithms of the user's own (the example modules and one written here with a nested
// result) beside PrimeChecker, in headless Chromium against a real service: every algorithm's jobs
// listed with their results on one line, the filter by algorithm, any result shown member by member with
// every digit, PrimeChecker's in words. Screenshots go to a temporary folder named in the test output.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { startApp, type TestApp } from '../helpers/app.js'
import { hasBrowser, launchBrowser, NO_BROWSER, TEST_HOST, watchPage } from '../helpers/browser.js'
import { waitForJob } from '../helpers/jobs.js'
import { until } from '../helpers/time.js'

const EXAMPLES = fileURLToPath(new URL('../../examples/algorithms/', import.meta.url))
const BIG = '18446744073709551617'

/** The Collatz walk of n, as the example computes it. */
function collatz(n: bigint): { steps: number; peak: bigint } {
  let steps = 0
  let peak = n
  for (let x = n; x !== 1n; steps++) {
    x = x % 2n === 0n ? x / 2n : 3n * x + 1n
    if (x > peak) peak = x
  }
  return { steps, peak }
}

const NESTED_MODULE = `export default {
  name: 'Nested',
  version: '2.1.0',
  description: 'A result with a list of objects, a list of numbers and an object inside.',
  params: { type: 'object', additionalProperties: false, properties: {} },
  result: { type: 'object' },
  run() {
    return { top: [{ word: 'the', count: 2 }, { word: 'cat', count: 1 }], sizes: [3, 5], inner: { ok: true } }
  },
}
`

describe('the dashboard with algorithms of your own', { skip: !hasBrowser() && NO_BROWSER }, () => {
  let browser: Browser
  let server: TestApp
  let folder: string
  let screenshots: string
  const ids: Record<'small' | 'big' | 'slow' | 'nested' | 'prime', string> = {
    small: '',
    big: '',
    slow: '',
    nested: '',
    prime: '',
  }

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'algoserve-dashboard-modules-'))
    writeFileSync(join(folder, 'nested.mjs'), NESTED_MODULE)
    screenshots = mkdtempSync(join(tmpdir(), 'algoserve-dashboard-screenshots-'))
    server = await startApp({
      algorithms: [join(EXAMPLES, 'collatz.mjs'), join(EXAMPLES, 'slow-count.mjs'), folder],
    })
    browser = await launchBrowser()
    // Raw bodies: the big n must reach the service with every digit.
    const create = async (body: string) => {
      const response = await fetch(`${server.url}/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
      assert.equal(response.status, 202, await response.clone().text())
      const id = ((await response.json()) as { job_id: string }).job_id
      const job = await waitForJob(server.url, id)
      assert.equal(job.status, 'completed', JSON.stringify(job))
      return id
    }
    ids.prime = await create('{"algorithm": "PrimeChecker", "params": {"number": 91}}')
    ids.small = await create('{"algorithm": "Collatz", "params": {"n": 27}}')
    ids.big = await create(`{"algorithm": "Collatz", "params": {"n": ${BIG}}}`)
    ids.slow = await create('{"algorithm": "SlowCount", "params": {"to": 2, "step_ms": 10}}')
    ids.nested = await create('{"algorithm": "Nested", "params": {}}')
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    rmSync(folder, { recursive: true, force: true })
  })

  const origin = () => `http://${TEST_HOST}:${new URL(server.url).port}`
  async function open(hash = '') {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const watch = watchPage(page, origin())
    await page.goto(`${origin()}/dashboard${hash}`)
    return { page, watch }
  }
  const rows = (page: Page) => page.locator('#job-table tbody tr')
  const cell = (page: Page, id: string, label: string) =>
    page.locator(`#job-table tbody tr[data-job-id="${id}"] td[data-label="${label}"]`).textContent()
  async function shot(page: Page, name: string, t: { diagnostic(message: string): void }) {
    const path = join(screenshots, name)
    await page.screenshot({ path, fullPage: true })
    t.diagnostic(`screenshot: ${path}`)
  }

  test('every algorithm listed with its result on one line; the filter by algorithm', async (t) => {
    const { page, watch } = await open()
    await until(async () => (await rows(page).count()) === 5, 15_000, 'the list shows 5 jobs', 100)
    assert.equal(await cell(page, ids.small, 'Algorithm'), 'Collatz')
    assert.equal(await cell(page, ids.small, 'Result'), 'steps: 111, peak: 9232')
    assert.equal(await cell(page, ids.slow, 'Result'), 'counted: 2, complete: true')
    const big = collatz(BigInt(BIG))
    assert.equal(await cell(page, ids.big, 'Result'), `steps: ${big.steps}, peak: ${big.peak}`)
    assert.equal(await cell(page, ids.prime, 'Algorithm'), 'PrimeChecker')
    assert.equal(await cell(page, ids.prime, 'Result'), '91')
    // Nested members in the cell as JSON, cut.
    assert.match((await cell(page, ids.nested, 'Result')) ?? '', /^top: \[\{"word":"the","count":2\},.*…$/)

    const options = await page.locator('#algorithm-filter option').allTextContents()
    assert.deepEqual(options, [
      'all',
      'Collatz 1.0.0',
      'Nested 2.1.0',
      'PrimeChecker 1.0.0',
      'SlowCount 1.0.0',
    ])
    await page.locator('#algorithm-filter').selectOption('Collatz')
    await until(async () => (await rows(page).count()) === 2, 15_000, 'the list shows 2 jobs', 100)
    assert.deepEqual(await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job-id'))), [
      ids.big,
      ids.small,
    ])
    await shot(page, 'algorithms-list-collatz.png', t)
    await page.locator('#status-filter').selectOption('failed')
    await page.locator('#no-jobs').filter({ hasText: 'No failed jobs of Collatz.' }).waitFor()
    assert.deepEqual(watch.problems, [])
    assert.deepEqual(watch.elsewhere, [])
    await page.close()
  })

  test("a job's result member by member, every digit; the JSON below it", async (t) => {
    const { page, watch } = await open(`#job=${ids.big}`)
    const view = page.locator('#detail-result-view')
    const { steps, peak } = collatz(BigInt(BIG))
    await view.locator('dt').first().waitFor()
    assert.deepEqual(await view.locator('dt').allTextContents(), ['steps', 'peak'])
    assert.deepEqual(await view.locator('dd').allTextContents(), [String(steps), String(peak)])
    assert.ok(((await page.locator('#detail-result').textContent()) ?? '').includes(`"peak": ${peak}`))
    // The params as the job stored them, every digit.
    assert.equal(await page.locator('#detail-params').textContent(), `{\n  "n": ${BIG}\n}`)
    await shot(page, 'algorithms-detail-collatz.png', t)
    assert.deepEqual(watch.problems, [])
    await page.close()
  })

  test('a list of objects is a table, a list of numbers one line, an object its members', async (t) => {
    const { page, watch } = await open(`#job=${ids.nested}`)
    const view = page.locator('#detail-result-view')
    await view.locator('table').waitFor()
    assert.deepEqual(await view.locator('table th').allTextContents(), ['word', 'count'])
    assert.deepEqual(await view.locator('table td').allTextContents(), ['the', '2', 'cat', '1'])
    assert.deepEqual(await view.locator(':scope > dl > dt').allTextContents(), ['top', 'sizes', 'inner'])
    assert.equal(await view.locator(':scope > dl > dd').nth(1).textContent(), '3, 5')
    assert.equal(await view.locator(':scope > dl > dd').nth(2).textContent(), 'oktrue')
    await shot(page, 'algorithms-detail-nested.png', t)
    assert.deepEqual(watch.problems, [])
    await page.close()
  })

  test('on a phone (390 px): every job a card, a nested result within the screen', async (t) => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } })
    const watch = watchPage(page, origin())
    await page.goto(`${origin()}/dashboard#job=${ids.nested}`)
    await page.locator('#detail-result-view table').waitFor()
    await until(async () => (await rows(page).count()) === 5, 15_000, 'the list shows 5 jobs', 100)
    const width = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
          .documentElement.scrollWidth,
    )
    assert.ok(width <= 390, `page is ${width} px wide`)
    await shot(page, 'algorithms-phone.png', t)
    assert.deepEqual(watch.problems, [])
    await page.close()
  })

  test("PrimeChecker's result in words", async () => {
    const { page, watch } = await open(`#job=${ids.prime}`)
    await page.locator('#detail-result-view .sentence').waitFor()
    assert.equal(await page.locator('#detail-result-view .sentence').textContent(), '91 is not prime: 7 × 13')
    assert.ok(((await page.locator('#detail-params').textContent()) ?? '').includes('"number": 91'))
    assert.deepEqual(watch.problems, [])
    await page.close()
  })
})

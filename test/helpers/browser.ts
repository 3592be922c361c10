// Headless Chromium for the documentation tests: Debian's /usr/bin/chromium driven by playwright-core
// (never a downloaded browser). A host name of the tests' own is mapped to 127.0.0.1, so pages are
// reached the way a user reaches a service by name over plain HTTP.
import { existsSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'
export const TEST_HOST = 'algoserve.test'

/** The message a test skips with when there is no browser. */
export const NO_BROWSER = `SKIPPED: no browser at ${CHROMIUM} (apt-get install chromium)`

export const hasBrowser = (): boolean => existsSync(CHROMIUM)

export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--host-resolver-rules=MAP ${TEST_HOST} 127.0.0.1`,
    ],
  })
}

/** What a page did that a clean page does not: console errors, page errors, failed or 4xx/5xx loads. */
export interface PageWatch {
  problems: string[]
  /** Every request to an origin other than `origin` (data: and blob: stay in the page). */
  elsewhere: string[]
}

export function watchPage(page: Page, origin: string): PageWatch {
  const watch: PageWatch = { problems: [], elsewhere: [] }
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      watch.problems.push(`console ${message.type()}: ${message.text()}`)
    }
  })
  page.on('pageerror', (error) => watch.problems.push(`page error: ${error.message}`))
  page.on('requestfailed', (request) =>
    watch.problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`),
  )
  page.on('request', (request) => {
    const target = new URL(request.url())
    if (target.protocol !== 'data:' && target.protocol !== 'blob:' && target.origin !== origin) {
      watch.elsewhere.push(request.url())
    }
  })
  return watch
}

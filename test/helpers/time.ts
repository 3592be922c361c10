// Waiting in tests: a plain sleep, and one poller for "until this holds".
export { setTimeout as sleep } from 'node:timers/promises'

import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Calls `check` every `intervalMs` until it gives something other than `undefined` or `false`, and
 * returns that; fails after `timeoutMs`, saying `what` (read at that moment) did not happen.
 */
export async function until<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  what: string | (() => string) = 'the condition held',
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() >= deadline)
      throw new Error(`not within ${timeoutMs} ms: ${typeof what === 'string' ? what : what()}`)
    await sleep(intervalMs)
  }
}

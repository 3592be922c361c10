// Libraries that speak through `console` (BullMQ prints its notices, such as the eviction-policy one,
// once per connection it makes) would write raw text to stderr beside the JSON log. In the service's
// process their console.warn and console.error go into the log instead, each distinct text once: a
// notice repeated for every connection is one line.
import { format } from 'node:util'
import type { Logger } from 'pino'

/** Distinct texts remembered; past this, new ones are still logged, repeats too. */
const REMEMBERED = 1000

export function consoleIntoLog(log: Logger): void {
  const seen = new Set<string>()
  const into =
    (level: 'warn' | 'error') =>
    (...args: unknown[]): void => {
      const text = format(...args)
      if (seen.has(text)) return
      if (seen.size < REMEMBERED) seen.add(text)
      log[level](text)
    }
  console.warn = into('warn')
  console.error = into('error')
}

// The algorithm's own time, as metadata.elapsed_time reports it: whole microseconds, which print as
// short decimals (0.004023, not 0.004023482999999942), inline and on a worker thread alike.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { checkModule } from '../../src/algorithms/contract.js'
import primeCheckerModule from '../../src/algorithms/prime-checker/index.js'
import { Executor } from '../../src/execution/executor.js'
import { timedRunInline } from '../../src/execution/timed-run.js'
import { createMetrics } from '../../src/metrics/metrics.js'

/** At most six decimals as JavaScript prints the number (and so as JSON carries it). */
const microseconds = (seconds: number) => /^[0-9]+(\.[0-9]{1,6})?$/.test(String(seconds))

const primeChecker = checkModule(primeCheckerModule, 'PrimeChecker')
const context = {
  budgetMs: 1000,
  signal: new AbortController().signal,
  deadline: Date.now() + 60_000,
  progress: () => {},
}
const executor = new Executor({ threads: 1 }, createMetrics())
after(() => executor.close())

test('elapsed time in whole microseconds, inline and on the pool', async () => {
  const seen: number[] = []
  for (let i = 0; i < 200; i++) {
    const run = timedRunInline(primeChecker, { number: 1_000_003n + BigInt(i) }, context)
    assert.ok(run !== undefined, 'a 7-digit number runs inline')
    seen.push(run.elapsedSeconds)
  }
  // Rho on a 64-bit semiprime: a worker thread, some milliseconds.
  for (let i = 0; i < 5; i++) {
    const run = await executor.run(primeChecker, { number: 4294967279n * 4294967291n }, { budgetMs: 1000 })
    assert.ok(run.elapsedSeconds > 0, String(run.elapsedSeconds))
    seen.push(run.elapsedSeconds)
  }
  const long = seen.filter((seconds) => !microseconds(seconds))
  assert.deepEqual(long, [], 'every time prints with six decimals at most')
})

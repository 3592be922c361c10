// PrimeChecker's own progress: the quadratic sieve's relations and ECM's curves, as its run reports them
// (index.ts to factorize.ts through the Budget), and through a real Executor to a hook on the main thread.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkModule } from '../../../src/algorithms/contract.js'
import { grouped } from '../../../src/algorithms/prime-checker/budget.js'
import primeCheckerModule from '../../../src/algorithms/prime-checker/index.js'
import { Executor } from '../../../src/execution/executor.js'
import { createMetrics } from '../../../src/metrics/metrics.js'

/** A balanced 42-digit semiprime: rho and ECM's first curves miss, the sieve splits it. */
const P21 = 246890461229458600663n
const Q22 = 3849753166471867256191n
/** F8 = 2^256 + 1: 78 digits, past the sieve; ECM finds its 16-digit factor at B1 = 11000 or below. */
const F8 = 2n ** 256n + 1n
const F8_FACTORS = [1238926361552897n, 93461639715357977769163558199606896584051237541638188580280321n]

const BUDGET_MS = 120_000
const SIEVING = /^sieve: ([\d,]+) of ([\d,]+) relations$/
const SOLVING = /^sieve: solving the matrix of [\d,]+ relations$/
const CURVE = /^ECM: curve ([\d,]+) of ([\d,]+) at B1=(\d+)$/

type Update = [fraction: number, message: string]

function factorWithProgress(number: bigint): { factors: bigint[]; updates: Update[] } {
  const updates: Update[] = []
  const { factors } = primeCheckerModule.run(
    { number },
    { budgetMs: BUDGET_MS, progress: (fraction, message) => updates.push([fraction, message as string]) },
  )
  return { factors, updates }
}

const count = (text: string) => Number(text.replaceAll(',', ''))

test('the sieve reports its relations found out of those needed, rising, then its matrix', () => {
  const { factors, updates } = factorWithProgress(P21 * Q22)
  assert.deepEqual(factors, [P21, Q22])
  const sieve = updates.filter(([, message]) => message.startsWith('sieve: '))
  // The rest is ECM's few curves before the sieve, which say so.
  for (const [, message] of updates) assert.match(message, /^(sieve|ECM): /)
  assert.ok(sieve.length > 50, `${sieve.length} sieve updates`)
  const last = sieve.at(-1) as Update
  assert.equal(last[0], 1)
  assert.match(last[1], SOLVING)
  const sieving = sieve.slice(0, -1)
  for (const [i, [fraction, message]] of sieving.entries()) {
    const [, found, wanted] = SIEVING.exec(message) ?? assert.fail(`not a sieve message: ${message}`)
    assert.equal(fraction, count(found as string) / count(wanted as string), message)
    if (i > 0) assert.ok(fraction > (sieving[i - 1] as Update)[0], `rising: ${message}`)
  }
})

test('ECM reports its curves, with their share of the schedule rising', () => {
  const { factors, updates } = factorWithProgress(F8)
  assert.deepEqual(factors, F8_FACTORS)
  assert.ok(updates.length > 10, `${updates.length} updates`)
  assert.deepEqual(updates[0], [1 / 2938, 'ECM: curve 1 of 8 at B1=150'])
  for (const [i, [fraction, message]] of updates.entries()) {
    const [, curve, curves] = CURVE.exec(message) ?? assert.fail(`not an ECM message: ${message}`)
    assert.ok(count(curve as string) <= count(curves as string), message)
    if (i > 0) assert.ok(fraction > (updates[i - 1] as Update)[0], `rising: ${message}`)
  }
})

test('counts are grouped by thousands', () => {
  assert.deepEqual([0, 999, 1530, 1_000_000].map(grouped), ['0', '999', '1,530', '1,000,000'])
})

test("a job's factorisation on a worker thread reports to the hook on the main thread", async () => {
  const executor = new Executor({ threads: 1 }, createMetrics())
  try {
    const updates: unknown[][] = []
    const run = await executor.run(
      checkModule(primeCheckerModule, 'PrimeChecker'),
      { number: P21 * Q22 },
      { budgetMs: BUDGET_MS, lane: 'job', progress: (...update) => updates.push(update) },
    )
    assert.deepEqual((run.result as { factors: bigint[] }).factors, [P21, Q22])
    assert.ok(updates.length >= 2, `${updates.length} updates`)
    assert.match((updates.at(-1) as Update)[1], SOLVING)
  } finally {
    await executor.close()
  }
})

// The example algorithm modules (examples/algorithms/) as a test of one's own would take them:
// imported and run with what the service gives `run`, their big integers exact, the slow one stopped by
// its signal and by its deadline. The modules the README and docs/algorithms.md show pass the loader.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { loadModuleFile } from '../../src/algorithms/loader.js'

interface Module {
  // biome-ignore lint/suspicious/noExplicitAny: what each example's run returns is checked below
  run(params: Record<string, unknown>, context: RunContext): any
}
interface RunContext {
  signal: AbortSignal
  deadline: number
  budgetMs: number
  progress(fraction: number, message?: string): void
}
/** An example's default export (plain JavaScript: imported by its URL, with no types). */
const example = async (file: string) =>
  ((await import(new URL(`../../examples/algorithms/${file}`, import.meta.url).href)) as { default: Module })
    .default
const collatz = await example('collatz.mjs')
const slowCount = await example('slow-count.mjs')

const context = (signal = new AbortController().signal, deadline = Date.now() + 60_000): RunContext => ({
  signal,
  deadline,
  budgetMs: 1000,
  progress: () => {},
})

describe('collatz.mjs', () => {
  test('27 takes 111 steps and peaks at 9232', async () => {
    assert.deepEqual(await collatz.run({ n: 27 }, context()), { steps: 111, peak: 9232n })
    assert.deepEqual(await collatz.run({ n: 1 }, context()), { steps: 0, peak: 1n })
  })

  test('an n past 2^53 arrives as a BigInt and its walk is exact', async () => {
    // 2^64 + 1: odd, so the first step is 3n + 1, which a double would round.
    const n = 18446744073709551617n
    const { steps, peak } = await collatz.run({ n }, context())
    assert.ok(peak >= 3n * n + 1n)
    let x = n
    for (let i = 0; i < steps; i++) x = x % 2n === 0n ? x / 2n : 3n * x + 1n
    assert.equal(x, 1n)
  })

  test('a long walk stops when its signal is aborted', async () => {
    const controller = new AbortController()
    controller.abort(new Error('given up'))
    // 2^4000 - 1 takes tens of thousands of steps: past the first check.
    await assert.rejects(async () => collatz.run({ n: 2n ** 4000n - 1n }, context(controller.signal)), {
      message: 'given up',
    })
  })
})

describe('slow-count.mjs', () => {
  test('counts to `to`, a step every `step_ms`', async () => {
    assert.deepEqual(await slowCount.run({ to: 3, step_ms: 5 }, context()), { counted: 3, complete: true })
  })

  test('stops at the next step once its signal is aborted', async () => {
    const controller = new AbortController()
    const run = slowCount.run({ to: 1000, step_ms: 20 }, context(controller.signal))
    setTimeout(() => controller.abort(new Error('cancelled')), 50)
    // timers/promises' AbortError, the signal's reason as its cause.
    await assert.rejects(
      run,
      (error: Error) => error.name === 'AbortError' && (error.cause as Error).message === 'cancelled',
    )
  })

  test('returns what it has, saying so, rather than run past its deadline', async () => {
    const result = await slowCount.run({ to: 1000, step_ms: 20 }, context(undefined, Date.now() + 400))
    assert.equal(result.complete, false)
    assert.ok(result.counted >= 1 && result.counted < 10, `counted ${result.counted}`)
  })
})

test("the README's and docs/algorithms.md's shortest-path modules load and answer 111 steps for 27", async () => {
  const folder = mkdtempSync(join(tmpdir(), 'algoserve-doc-modules-'))
  try {
    for (const doc of ['README.md', 'docs/algorithms.md']) {
      const text = readFileSync(new URL(`../../${doc}`, import.meta.url), 'utf8')
      const source = /```js\n\/\/ collatz\.mjs\n([\s\S]*?)```/.exec(text)?.[1]
      assert.ok(source, `${doc} shows collatz.mjs`)
      const file = join(folder, `${doc.replace('/', '-')}.mjs`)
      writeFileSync(file, source)
      const algorithm = await loadModuleFile(file)
      assert.equal(algorithm.name, 'Collatz')
      const result = (await algorithm.module.run({ n: 27 }, context())) as { steps: number }
      assert.equal(result.steps, 111, doc)
      assert.deepEqual(algorithm.checkResult(result), [])
    }
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
})

import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { INLINE } from '../../src/algorithms/algorithm.js'
import { checkModule } from '../../src/algorithms/contract.js'
import primeCheckerModule from '../../src/algorithms/prime-checker/index.js'
import { AlgorithmError, ConfigError } from '../../src/errors.js'
import { Executor } from '../../src/execution/executor.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'

// Below 2^64 but for rho: factors above 2^16 keep it off the event loop.
const SEMIPRIME_64 = 4294967279n * 4294967291n

const RSA_129 =
  114381625757888867669235779976146612010218296721242362562561842935706935245733897830597123563958705058989075147599290026879543541n

const primeChecker = checkModule(primeCheckerModule, 'PrimeChecker')

let executor: Executor
before(() => {
  executor = new Executor({ threads: 1 }, createMetrics())
})
after(() => executor.close())

test('runs cheap calls inline and heavy ones on the pool, with the same results', async () => {
  const cheap = await executor.run(primeChecker, { number: 4294967291n }, { budgetMs: 1000 })
  assert.equal((cheap.result as { is_prime: boolean }).is_prime, true)
  const heavy = await executor.run(primeChecker, { number: 18446744073709551617n }, { budgetMs: 1000 })
  assert.deepEqual((heavy.result as { factors: bigint[] }).factors, [274177n, 67280421310721n])
  assert.ok(heavy.elapsedSeconds > 0 && heavy.elapsedSeconds < 1)
})

test('an abort stops a call that is running on the pool', async () => {
  const controller = new AbortController()
  const started = performance.now()
  const run = executor.run(primeChecker, { number: RSA_129 }, { budgetMs: 60_000, signal: controller.signal })
  setTimeout(() => controller.abort(new Error('client went away')), 200)
  await assert.rejects(run, /client went away/)
  assert.ok(performance.now() - started < 10_000, 'the 60 s budget was not waited for')
  // The pool replaces the stopped thread and goes on serving.
  const next = await executor.run(primeChecker, { number: 18446744073709551557n }, { budgetMs: 1000 })
  assert.equal((next.result as { is_prime: boolean }).is_prime, true)
})

test('runs waiting for a thread start in order, and an aborted one never starts', async () => {
  const finished: string[] = []
  const track = (name: string, run: Promise<unknown>) => run.then(() => finished.push(name))
  // A thread stopped by the test above is replaced: its start must not count as a long run.
  await executor.run(primeChecker, { number: SEMIPRIME_64 }, { budgetMs: 1000 })
  // The only thread is busy for 300 ms with RSA-129; the others wait their turn.
  const first = track('first', executor.run(primeChecker, { number: RSA_129 }, { budgetMs: 300 }))
  const controller = new AbortController()
  const aborted = executor.run(
    primeChecker,
    { number: RSA_129 },
    { budgetMs: 60_000, signal: controller.signal },
  )
  const second = track('second', executor.run(primeChecker, { number: SEMIPRIME_64 }, { budgetMs: 1000 }))
  const third = track('third', executor.run(primeChecker, { number: SEMIPRIME_64 }, { budgetMs: 1000 }))
  controller.abort(new Error('gone before it started'))
  await assert.rejects(aborted, /gone before it started/)
  await Promise.all([first, second, third])
  assert.deepEqual(finished, ['first', 'second', 'third'])
})

// The module as a file would give it: no shortcuts, so every run goes to a thread.
const { [INLINE]: _inline, ...withoutInline } = primeCheckerModule

test('a failing run is an AlgorithmError, and a closed pool is not alive', async () => {
  const other = new Executor({ threads: 1 }, createMetrics())
  assert.equal(other.alive, true)
  await assert.rejects(
    other.run(
      checkModule({ ...withoutInline, name: 'NoSuchAlgorithm' }, 'a test'),
      { number: 5n },
      { budgetMs: 1000 },
    ),
    AlgorithmError,
  )
  await other.close()
  assert.equal(other.alive, false)
})

test('a run that fails inline is an AlgorithmError saying why, and counted as an error', async () => {
  const metrics = createMetrics()
  const other = new Executor({ threads: 1 }, metrics)
  const failing = checkModule(
    {
      ...primeCheckerModule,
      name: 'FailsInline',
      run: () => ({ is_prime: 'perhaps' }),
      [INLINE]: { isCheap: () => true },
    },
    'a test',
  )
  try {
    assert.throws(() => other.start(failing, { number: 5n }, { budgetMs: 1000 }), AlgorithmError)
    await assert.rejects(other.run(failing, { number: 5n }, { budgetMs: 1000 }), (error: unknown) => {
      assert.ok(error instanceof AlgorithmError)
      assert.match(error.message, /FailsInline.*breaks its result schema/)
      return true
    })
    const errors = (await metrics.algorithmExecutions.get()).values.find(
      (value) => value.labels.algorithm === 'FailsInline' && value.labels.status === 'error',
    )
    assert.equal(errors?.value, 2, 'both failures counted')
  } finally {
    await other.close()
  }
})

test('/invoke and job runs waiting for a thread take turns', async () => {
  const finished: string[] = []
  const run = (name: string, lane: 'invoke' | 'job', number: bigint, budgetMs = 1000) =>
    executor.run(primeChecker, { number }, { budgetMs: budgetMs, lane }).then(() => finished.push(name))
  // The only thread is busy for 300 ms; a queue of jobs forms, then two /invoke calls arrive.
  const all = [
    run('busy', 'job', RSA_129, 300),
    run('job1', 'job', SEMIPRIME_64),
    run('job2', 'job', SEMIPRIME_64),
    run('job3', 'job', SEMIPRIME_64),
    run('invoke1', 'invoke', SEMIPRIME_64),
    run('invoke2', 'invoke', SEMIPRIME_64),
  ]
  await Promise.all(all)
  // Which line goes first depends on which was served last; from then on they alternate.
  const turns = [
    ['busy', 'invoke1', 'job1', 'invoke2', 'job2', 'job3'],
    ['busy', 'job1', 'invoke1', 'job2', 'invoke2', 'job3'],
  ]
  assert.ok(
    turns.some((order) => order.join() === finished.join()),
    `${finished.join()}: /invoke waited behind the whole job queue`,
  )
})

test('a short run does not wait for a long one: a spare thread starts once every thread holds a long run', async () => {
  const finished: string[] = []
  const run = (name: string, number: bigint, budgetMs: number) =>
    executor
      .run(primeChecker, { number }, { budgetMs: budgetMs, lane: 'job' })
      .then(() => finished.push(name))
  // The only thread is held for 3 s; the short run, queued behind it, starts on the spare thread.
  await Promise.all([run('long', RSA_129, 3000), run('short', SEMIPRIME_64, 1000)])
  assert.deepEqual(finished, ['short', 'long'])
})

test('one spare thread at most: with it held by a long run too, a short run waits for a thread to free', async () => {
  const finished: string[] = []
  const run = (name: string, number: bigint, budgetMs: number) =>
    executor
      .run(primeChecker, { number }, { budgetMs: budgetMs, lane: 'job' })
      .then(() => finished.push(name))
  await Promise.all([
    run('long1', RSA_129, 2500),
    run('long2', RSA_129, 3500),
    // Queued until long1 has been running for a second, then it waits for long1's end (the second
    // long run took the spare thread): it ends between the two.
    run('short', SEMIPRIME_64, 1000),
  ])
  assert.deepEqual(finished, ['long1', 'short', 'long2'])
})

test('warm() resolves once every thread has loaded the modules, and rejects naming a module that fails in a thread', async () => {
  const modules = writeModules({
    'main-only.mjs': `import { isMainThread } from 'node:worker_threads'
if (!isMainThread) throw new Error('this module runs on the main thread only')
export default {
${validMembers('MainOnly')}
}
`,
    'anywhere.mjs': moduleSource(validMembers('Anywhere')),
  })
  const good = new Executor({ threads: 2, algorithmFiles: [modules.file('anywhere.mjs')] }, createMetrics())
  const bad = new Executor({ threads: 2, algorithmFiles: [modules.file('main-only.mjs')] }, createMetrics())
  try {
    await good.warm()
    await assert.rejects(bad.warm(), (error: Error) => {
      assert.ok(error instanceof ConfigError)
      assert.equal(
        error.message,
        `A worker thread could not start: Algorithm module ${modules.file('main-only.mjs')} could not be loaded: this module runs on the main thread only`,
      )
      return true
    })
  } finally {
    await Promise.all([good.close(), bad.close()])
    modules.remove()
  }
})

// `npm test`: runs every test/**/*.test.ts, or the files and folders given as arguments, under node:test
// with tsx. A runner rather than a glob argument because `node --test` takes globs only from Node 21.
//
// Two files at a time (more on a machine with more cores, as node:test's own default gives): most files
// wait on the service, Redis, child processes and timers far more than they compute, so two share
// 2 cores well. The files in ALONE run afterwards, one at a time, with the machine to themselves: they
// bound the wall-clock time of work to within a second or so (the executor's long runs and spare
// thread, the factoring budgets, the gaps between webhook attempts, a webhook to a second receiver, a
// fast job behind a backlog, /healthz's p99 while an algorithm loops or answers 15 MB). Beside another
// file, two of them failed: F8 factored in 2.7 s for a 2 s budget, a webhook retry waited 3.7 s for a
// bound of 3. TEST_CONCURRENCY=1 runs every file one at a time.
//
// The shared files start longest first (LONGEST, each over half a minute on a 2-core machine, longest
// first), so that no long file starts late and runs on while the other slot has nothing left to run.
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join, relative } from 'node:path'

const ALONE = new Set([
  'test/algorithms/prime-checker/ecm.test.ts',
  'test/algorithms/prime-checker/factorize.test.ts',
  'test/algorithms/prime-checker/quadratic-sieve.test.ts',
  'test/execution/executor.test.ts',
  'test/execution/process-output.test.ts',
  'test/jobs/algorithm-share.test.ts',
  'test/misbehaviour/modules.test.ts',
  'test/misbehaviour/programs.test.ts',
  'test/webhooks/fair-share.test.ts',
  'test/webhooks/receiver-pace.test.ts',
])

const LONGEST = [
  'test/jobs/redis/distributed.test.ts',
  'test/webhooks/delivery.test.ts',
  'test/main-tracing.test.ts',
  'test/jobs/redis/cluster.test.ts',
  'test/main.test.ts',
  'test/jobs/redis/rolling-upgrade.test.ts',
  'test/client/cli.test.ts',
  'test/deploy/dockerfile.test.ts',
  'test/routes/docs-browser.test.ts',
  'test/cluster/http-processes.test.ts',
  'test/routes/dashboard-browser.test.ts',
  'test/routes/dashboard-progress-browser.test.ts',
  'test/algorithms/prime-checker/kernel.test.ts',
  'test/misbehaviour/worker-algorithms.test.ts',
  'test/main-shutdown-redis.test.ts',
  'test/jobs/redis/partition.test.ts',
  'test/execution/process-pool.test.ts',
]

const root = join(import.meta.dirname, '..')
const fromRoot = (file) => relative(root, join(process.cwd(), file))
const findTests = (path) =>
  statSync(path).isDirectory()
    ? readdirSync(path, { recursive: true })
        .filter((name) => name.endsWith('.test.ts'))
        .map((name) => join(path, name))
    : [path]
const args = process.argv.slice(2)
const files = (args.length > 0 ? args : [join(root, 'test')])
  .flatMap((path) => findTests(path))
  .map((file) => relative(process.cwd(), file))
  .sort()
if (files.length === 0) {
  console.error('no test files found')
  process.exit(1)
}
const concurrency = Number(process.env.TEST_CONCURRENCY ?? Math.max(2, availableParallelism() - 1))
const alone = files.filter((file) => ALONE.has(fromRoot(file)))
const rank = (file) => {
  const at = LONGEST.indexOf(fromRoot(file))
  return at === -1 ? LONGEST.length : at
}
const shared = files.filter((file) => !alone.includes(file)).sort((a, b) => rank(a) - rank(b))
const runFiles = (list, filesAtATime) =>
  list.length === 0
    ? 0
    : (spawnSync(
        process.execPath,
        ['--import', 'tsx', join(root, 'test/run-pass.mjs'), String(filesAtATime), ...list],
        { stdio: 'inherit' },
      ).status ?? 1)
const status = [runFiles(shared, concurrency), runFiles(alone, 1)]
process.exit(status.find((code) => code !== 0) ?? 0)

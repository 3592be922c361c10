// One pass of test/run.mjs: the files given, CONCURRENCY at a time, started in the order given (with
// `node --test` they would start in name order, whatever the order given), each in its own process as
// `node --test` runs them, reported by the spec reporter. Exits 1 when a test failed.
// Usage: node --import tsx test/run-pass.mjs CONCURRENCY FILE...
import { resolve } from 'node:path'
import { run } from 'node:test'
import { spec } from 'node:test/reporters'

const [concurrency, ...files] = process.argv.slice(2)
const stream = run({ files: files.map((file) => resolve(file)), concurrency: Number(concurrency) })
stream.on('test:fail', () => {
  process.exitCode = 1
})
stream.compose(spec).pipe(process.stdout)

// `npm test`: runs every test/**/*.test.ts, or the files and folders given as arguments, under node:test
// with tsx. A runner rather than a glob argument because `node --test` takes globs only from Node 21.
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const root = join(import.meta.dirname, '..')
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
const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
})
process.exit(run.status ?? 1)

// `algoserve algorithms`, `algoserve algorithms Name@range` and `algoserve call Name@range` against a real
// service serving several versions of one name, a canary split and a deprecated version: the versions
// marked in the table and on the algorithm's page, the version that answered, and a deprecation said.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { moduleSource, splitDefault, validMembers, writeModules } from '../helpers/algorithms.js'
import { startApp, type TestApp } from '../helpers/app.js'
import { cli } from '../helpers/cli.js'

/** A valid module Sum at `version` whose sum is its minor version, to tell which one ran. */
const at = (version: string) =>
  moduleSource(
    validMembers('Sum', `() => ({ sum: ${Number(version.split('.')[1])} })`).replace(
      "'1.0.0'",
      `'${version}'`,
    ),
  )

const modules = writeModules({ 'a.mjs': at('1.0.0'), 'b.mjs': at('1.1.0'), 'c.mjs': at('2.0.0') })
let server: TestApp
before(async () => {
  server = await startApp({
    algorithms: [modules.dir],
    defaultVersions: splitDefault('Sum', ['1.0.0', 9], ['1.1.0', 1]),
    deprecatedVersions: new Map([['Sum@1.0.0', { sunset: '2027-06-30' }]]),
  })
})
after(async () => {
  await server.close()
  modules.remove()
})

test('algorithms: a VERSIONS column marks the default split and the deprecated version', async () => {
  const run = await cli(['algorithms', '--url', server.url])
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stdout, /^NAME +VERSION +WORKERS +VERSIONS +DESCRIPTION$/m)
  assert.match(
    run.stdout,
    /^Sum +1\.0\.0 +1 +2\.0\.0, 1\.1\.0 \(default 10%\), 1\.0\.0 \(default 90%, deprecated until 2027-06-30\) +Adds two integers\.$/m,
  )
  const page = await cli(['algorithms', 'Sum', '--url', server.url])
  assert.equal(page.code, 0, page.stderr)
  assert.match(page.stdout, /^Versions \(algoserve algorithms Sum@<version> shows one\):$/m)
  assert.match(page.stdout, /^ {2}2\.0\.0$/m)
  const version = await cli(['algorithms', 'Sum@1.0', '--url', server.url])
  assert.equal(version.code, 0, version.stderr)
  assert.match(version.stdout, /^version +1\.0\.0$/m)
  assert.match(version.stdout, /^deprecated +yes; served until 2027-06-30$/m)
  // Its examples call that version.
  assert.match(version.stdout, /^ {2}algoserve call Sum@1\.0\.0 --params '\{"a":1,"b":2\}'$/m)
})

test("call Name@version runs that version, or a range's highest; a deprecated one says so", async () => {
  const range = await cli(['call', 'Sum@^1.1', 'a=1', 'b=2', '--url', server.url])
  assert.equal(range.code, 0, range.stderr)
  assert.match(range.stdout, /^algorithm +Sum 1\.1\.0$/m)
  assert.match(range.stdout, /^result\.sum +1$/m)
  assert.doesNotMatch(range.stdout, /deprecated/)
  const old = await cli(['call', 'Sum@1.0.0', 'a=1', 'b=2', '--url', server.url])
  assert.equal(old.code, 0, old.stderr)
  assert.match(old.stdout, /^algorithm +Sum 1\.0\.0$/m)
  assert.match(old.stdout, /^deprecated +yes; served until Wed, 30 Jun 2027 00:00:00 GMT$/m)
  const none = await cli(['call', 'Sum@3', 'a=1', 'b=2', '--url', server.url])
  assert.equal(none.code, 1)
  assert.match(
    none.stderr,
    /^algoserve: 404 ALGORITHM_NOT_FOUND: Algorithm 'Sum' has no loaded version matching '3'/,
  )
})

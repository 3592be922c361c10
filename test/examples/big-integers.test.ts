// docs/api.md's JavaScript client example runs against a live service and keeps 2^64 + 1 exact.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startApp, type TestApp } from '../helpers/app.js'

const SCRIPT = fileURLToPath(new URL('../../examples/javascript/big-integers.mjs', import.meta.url))

let server: TestApp
before(async () => {
  server = await startApp()
})
after(() => server.close())

test('examples/javascript/big-integers.mjs sends and reads 18446744073709551617 exactly', async () => {
  // Asynchronous: the service answering it runs in this process.
  const run = await promisify(execFile)(process.execPath, [SCRIPT, server.url], { timeout: 60_000 })
  const exact = 'number 18446744073709551617, factors 274177 x 67280421310721, product exact'
  assert.match(run.stdout, new RegExp(`^lossless-json: ${exact}$`, 'm'))
  assert.match(run.stdout, new RegExp(`^digits as a string: ${exact}$`, 'm'))
  const builtIn = typeof (JSON as { rawJSON?: unknown }).rawJSON === 'function'
  assert.match(
    run.stdout,
    builtIn
      ? new RegExp(`^JSON.rawJSON and the reviver source: ${exact}$`, 'm')
      : /JSON.rawJSON is not in Node .*; skipped/,
  )
})

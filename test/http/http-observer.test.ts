// Fresh request ids (docs/api.md, the request id): in the form of a UUID v4, and never the same twice.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { freshRequestId } from '../../src/http/http-observer.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

test('fresh ids are UUID v4 in form and all different', () => {
  const ids = Array.from({ length: 100_000 }, () => freshRequestId())
  for (const id of ids.slice(0, 1000)) assert.match(id, UUID_V4)
  assert.equal(new Set(ids).size, ids.length, 'no id repeats')
})

test('two processes give different ids', () => {
  const observer = fileURLToPath(new URL('../../src/http/http-observer.ts', import.meta.url))
  const script = `import { freshRequestId } from ${JSON.stringify(observer)}; console.log(freshRequestId())`
  const idOf = () =>
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    }).stdout.trim()
  const [first, second] = [idOf(), idOf()]
  assert.match(first, UUID_V4)
  assert.match(second, UUID_V4)
  assert.notEqual(first, second)
})

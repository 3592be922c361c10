// POST /admin/reload: with API keys on, a client with a key reloads the algorithms and is told what
// changed, or why the reload was refused (409 for a changed version, 422 for a list that does not load);
// without a key it is 401; with API keys off the route does not exist.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import { startApp, type TestApp } from '../helpers/app.js'

const KEY = 'ak_reload_41d7c0'
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

const at = (version: string, run?: string) => moduleSource(validMembers('Sum', run, version))

async function reload(url: string, key?: string) {
  const response = await fetch(`${url}/admin/reload`, {
    method: 'POST',
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

describe('with API keys on', () => {
  const folder = writeModules({ 'sum-1.0.0.mjs': at('1.0.0') })
  let server: TestApp
  before(async () => {
    server = await startApp({ algorithms: [folder.dir], primeChecker: false, apiKeys: [sha256(KEY)] })
  })
  after(async () => {
    await server.close()
    folder.remove()
  })

  test('a key is needed', async () => {
    const { status, body } = await reload(server.url)
    assert.equal(status, 401)
    assert.equal(body.error, 'UNAUTHORIZED')
  })

  test('it answers the versions loaded, added and removed', async () => {
    writeFileSync(folder.file('sum-1.1.0.mjs'), at('1.1.0'))
    const { status, body } = await reload(server.url, KEY)
    assert.equal(status, 200, JSON.stringify(body))
    assert.deepEqual(
      { versions: body.versions, added: body.added, removed: body.removed },
      { versions: ['Sum@1.1.0', 'Sum@1.0.0'], added: ['Sum@1.1.0'], removed: [] },
    )
    assert.equal(typeof body.request_id, 'string')
  })

  test('a changed version is 409 VERSION_CHANGED naming the file and the version', async () => {
    writeFileSync(folder.file('sum-1.1.0.mjs'), at('1.1.0', '() => ({ sum: 0 })'))
    try {
      const { status, body } = await reload(server.url, KEY)
      assert.equal(status, 409)
      assert.equal(body.error, 'VERSION_CHANGED')
      assert.deepEqual(body.details, {
        file: folder.file('sum-1.1.0.mjs'),
        algorithm: 'Sum',
        version: '1.1.0',
      })
    } finally {
      writeFileSync(folder.file('sum-1.1.0.mjs'), at('1.1.0'))
    }
  })

  test('a list that does not load is 422 RELOAD_FAILED with the reason', async () => {
    writeFileSync(folder.file('broken.mjs'), 'export default 42')
    try {
      const { status, body } = await reload(server.url, KEY)
      assert.equal(status, 422)
      assert.equal(body.error, 'RELOAD_FAILED')
      assert.match(body.message as string, /broken\.mjs/)
    } finally {
      rmSync(folder.file('broken.mjs'))
    }
  })
})

test('with API keys off there is no such route', async () => {
  const server = await startApp()
  try {
    assert.equal((await reload(server.url)).status, 404)
  } finally {
    await server.close()
  }
})

// The document's info and the pages' titles: the deployment's own from the settings, Algoserve's without.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { VERSION } from '../../src/version.js'
import { startApp, type TestApp } from '../helpers/app.js'

type Info = { title: string; version: string; description: string; license: unknown }

/** The document's info, and the <title> of /docs and /redoc. */
async function shown(server: TestApp) {
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { info: Info }
  const titleOf = async (path: string) =>
    /<title>(.*)<\/title>/.exec(await (await fetch(`${server.url}${path}`)).text())?.[1]
  return { info: document.info, docs: await titleOf('/docs/'), redoc: await titleOf('/redoc') }
}

describe('without the settings', () => {
  let server: TestApp
  before(async () => {
    server = await startApp()
  })
  after(() => server.close())

  test("Algoserve's title, version and description", async () => {
    const { info, docs, redoc } = await shown(server)
    assert.equal(info.title, 'Algoserve')
    assert.equal(info.version, VERSION)
    assert.match(info.description, /^Algorithms over HTTP\. PrimeChecker tests an integer of any size/)
    assert.match(info.description, /\n\* Every response carries `x-request-id`\.\n/)
    assert.deepEqual(info.license, { name: 'MIT', identifier: 'MIT' })
    assert.equal(docs, 'Algoserve API')
    assert.equal(redoc, 'Algoserve API - ReDoc')
  })
})

describe("with the deployment's title, version and description", () => {
  const description = '# Routes\n\nShortest paths over <your> graphs.\n\n* Weights are exact.'
  let server: TestApp
  before(async () => {
    server = await startApp({
      apiTitle: 'Routes <of> ACME & "co"',
      apiVersion: '2026.11',
      apiDescription: description,
    })
  })
  after(() => server.close())

  test('the document carries them as they are, and the pages show the title escaped', async () => {
    const { info, docs, redoc } = await shown(server)
    assert.equal(info.title, 'Routes <of> ACME & "co"')
    assert.equal(info.version, '2026.11')
    assert.equal(info.description, description)
    assert.deepEqual(info.license, { name: 'MIT', identifier: 'MIT' })
    assert.equal(docs, 'Routes &lt;of&gt; ACME &amp; &quot;co&quot;')
    assert.equal(redoc, 'Routes &lt;of&gt; ACME &amp; &quot;co&quot; - ReDoc')
  })

  test("metadata keeps the algorithm's own version, whatever the document's", async () => {
    const response = await fetch(`${server.url}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"number": 97}',
    })
    const body = (await response.json()) as { metadata: { version: string } }
    assert.equal(body.metadata.version, VERSION)
  })
})

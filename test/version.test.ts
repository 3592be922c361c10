// The service's version has one source, package.json: metadata, the OpenAPI document and the webhook user
// agent all carry it.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { startApp, type TestApp } from './helpers/app.js'
import { createJob, waitForJob } from './helpers/jobs.js'
import { type Receiver, startReceiver } from './helpers/receiver.js'

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
).version

let server: TestApp
let receiver: Receiver
before(async () => {
  server = await startApp({ webhookAllowPrivate: true })
  receiver = await startReceiver()
})
after(async () => {
  await server.close()
  await receiver.close()
})

test("/invoke's metadata carries package.json's version", async () => {
  const response = await fetch(`${server.url}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"number": 97}',
  })
  assert.equal(response.status, 200)
  const body = (await response.json()) as { metadata: { version: string } }
  assert.equal(body.metadata.version, PACKAGE_VERSION)
})

test("the OpenAPI document's info.version is package.json's version", async () => {
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { info: { version: string } }
  assert.equal(document.info.version, PACKAGE_VERSION)
})

test("a job's metadata and its webhook's user agent carry package.json's version", async () => {
  const created = await createJob(server.url, {
    algorithm: 'PrimeChecker',
    params: { number: '91' },
    webhook: receiver.url,
  })
  const job = await waitForJob(server.url, created.json.job_id as string)
  assert.equal(job.metadata?.version, PACKAGE_VERSION)
  const [delivery] = await receiver.waitFor(1, 10_000)
  assert.equal(delivery?.headers['user-agent'], `algoserve/${PACKAGE_VERSION}`)
})

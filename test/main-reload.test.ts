// Reloading the algorithms of `algoserve serve` as operators do: SIGHUP to the process (and to the primary
// of several HTTP processes, which passes it on), `--watch`, which reloads when a listed folder changes, and
// POST /admin/reload; with several HTTP processes, each of them reloads, and so does the primary that runs
// the embedded store's jobs.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { test } from 'node:test'
import { moduleSource, validMembers, writeModules } from './helpers/algorithms.js'
import { type Child, listening, loggedLines, serveFresh } from './helpers/child.js'
import { freshPrefix, skipWithoutRedis, startRedis } from './helpers/redis.js'
import { until } from './helpers/time.js'

const at = (name: string, version: string) => moduleSource(validMembers(name, undefined, version))

async function listed(url: string, headers: Record<string, string> = {}): Promise<string[]> {
  const { algorithms } = (await (await fetch(`${url}/algorithms`, { headers })).json()) as {
    algorithms: { name: string; version: string }[]
  }
  return algorithms.map(({ name, version }) => `${name}@${version}`)
}

/** Product's result, which only a process that has reloaded can give. */
async function sumOf(url: string): Promise<unknown> {
  const response = await fetch(`${url}/algorithms/Product/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ a: 2, b: 3 }),
  })
  return ((await response.json()) as { result?: unknown }).result
}

async function stop(child: Child): Promise<void> {
  child.process.kill('SIGTERM')
  assert.equal(await child.exit, 0, child.output())
}

for (const processes of [1, 2]) {
  // Several HTTP processes share their jobs through Redis.
  const skip = processes > 1 && skipWithoutRedis
  test(`SIGHUP reloads the algorithms (${processes} HTTP process${processes > 1 ? 'es' : ''})`, {
    skip,
  }, async (t) => {
    const folder = writeModules({ 'sum.mjs': at('Sum', '1.0.0') })
    t.after(() => folder.remove())
    const redis = processes > 1 ? await startRedis() : undefined
    t.after(() => redis?.close())
    const env: Record<string, string> = {}
    if (redis !== undefined)
      Object.assign(env, { ALGOSERVE_REDIS_URL: redis.url, ALGOSERVE_REDIS_PREFIX: freshPrefix() })
    const args = [
      '--algorithms',
      folder.dir,
      '--prime-checker',
      'false',
      '--http-processes',
      String(processes),
    ]
    const child = serveFresh(t, args, env)
    const url = await listening(child)
    // Every HTTP process has started, and listens for the signal.
    await until(async () => (await fetch(`${url}/readyz`)).status === 200, 60_000)
    writeFileSync(folder.file('product.mjs'), at('Product', '1.2.0'))
    child.process.kill('SIGHUP')
    await until(() => loggedLines(child, 'algorithms reloaded').length === processes, 30_000)
    for (let i = 0; i < 2 * processes; i++)
      assert.deepEqual(await listed(url), ['Product@1.2.0', 'Sum@1.0.0'], 'each process has reloaded')
    for (let i = 0; i < 2 * processes; i++) assert.deepEqual(await sumOf(url), { sum: 5 })
    const [line] = loggedLines<{ trigger: string; added: string[] }>(child, 'algorithms reloaded')
    assert.equal(line?.trigger, 'SIGHUP')
    assert.deepEqual(line?.added, ['Product@1.2.0'])
    await stop(child)
  })
}

test('with --watch a new file in a listed folder is served without a signal', async (t) => {
  const folder = writeModules({ 'sum.mjs': at('Sum', '1.0.0') })
  t.after(() => folder.remove())
  const child = serveFresh(t, ['--algorithms', folder.dir, '--prime-checker', 'false', '--watch'])
  const url = await listening(child)
  writeFileSync(folder.file('product.mjs'), at('Product', '1.2.0'))
  await until(async () => (await listed(url)).includes('Product@1.2.0'), 30_000)
  // The log is written asynchronously.
  await until(() => loggedLines(child, 'algorithms reloaded').length > 0, 10_000)
  assert.equal(loggedLines<{ trigger: string }>(child, 'algorithms reloaded')[0]?.trigger, 'watch')
  await stop(child)
})

const KEY = 'ak_reload_5e21b9'
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

// A SIGHUP goes the same way as a change the primary's watch sees (the Redis test above sends one).
for (const trigger of ['watch', 'admin'] as const) {
  test(`with two HTTP processes on the embedded store, a reload (${trigger}) reaches each process and the primary, whose runner takes the new version's jobs`, async (t) => {
    const folder = writeModules({ 'sum.mjs': at('Sum', '1.0.0') })
    t.after(() => folder.remove())
    const args = ['--algorithms', folder.dir, '--prime-checker', 'false', '--http-processes', '2']
    if (trigger === 'watch') args.push('--watch')
    const auth: Record<string, string> = trigger === 'admin' ? { authorization: `Bearer ${KEY}` } : {}
    const child = serveFresh(
      t,
      args,
      trigger === 'admin' ? { ALGOSERVE_API_KEYS: `sha256:${sha256(KEY)}` } : {},
    )
    const url = await listening(child)
    await until(async () => (await fetch(`${url}/readyz`)).status === 200, 60_000)
    writeFileSync(folder.file('product.mjs'), at('Product', '1.2.0'))
    if (trigger === 'admin') {
      const response = await fetch(`${url}/admin/reload`, { method: 'POST', headers: auth })
      assert.equal(response.status, 200)
      assert.deepEqual(((await response.json()) as { added: string[] }).added, ['Product@1.2.0'])
    }
    await until(
      () => loggedLines(child, 'algorithms reloaded').length === 3,
      30_000,
      () => child.output(),
    )
    const lines = loggedLines<{ trigger: string; process: number | string }>(child, 'algorithms reloaded')
    assert.deepEqual(lines.map((line) => String(line.process)).sort(), ['0', '1', 'primary'])
    for (const line of lines) assert.equal(line.trigger, trigger)
    for (let i = 0; i < 4; i++)
      assert.deepEqual(await listed(url, auth), ['Product@1.2.0', 'Sum@1.0.0'], 'each process has reloaded')
    // The primary runs it: a runner that had not reloaded would leave it pending.
    const created = await fetch(`${url}/jobs`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ algorithm: 'Product', params: { a: 2, b: 3 } }),
    })
    assert.equal(created.status, 202)
    const { job_id: id } = (await created.json()) as { job_id: string }
    const job = await until(async () => {
      const body = (await (await fetch(`${url}/jobs/${id}`, { headers: auth })).json()) as {
        status: string
        result?: unknown
      }
      return body.status === 'completed' && body
    }, 20_000)
    assert.deepEqual(job.result, { sum: 5 })
    await stop(child)
  })
}

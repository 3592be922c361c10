// Reloading the algorithms of `algoserve serve` as operators do: SIGHUP to the process (and to the primary
// of several HTTP processes, which passes it on), and `--watch`, which reloads when a listed folder changes.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { test } from 'node:test'
import { moduleSource, validMembers, writeModules } from './helpers/algorithms.js'
import { type Child, listening, loggedLines, serveFresh } from './helpers/child.js'
import { freshPrefix, skipWithoutRedis, startRedis } from './helpers/redis.js'
import { until } from './helpers/time.js'

const at = (name: string, version: string) => moduleSource(validMembers(name, undefined, version))

async function listed(url: string): Promise<string[]> {
  const { algorithms } = (await (await fetch(`${url}/algorithms`)).json()) as {
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
  assert.equal(await child.exit, 0)
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

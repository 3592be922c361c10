// What the request path of POST /invoke pays for: the hooks every request passes and nothing more. A
// feature switched off (API keys, rate limits, CORS: all off by default) adds no hook at all.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { test } from 'node:test'
import type { Config } from '../src/config.js'
import { startApp } from './helpers/app.js'

/** Each request's own: its Content-Type read, its id and metrics, its body's bytes, its answer counted. */
const ALWAYS = {
  onRequest: ['readContentType()', 'observeRequest()'],
  preParsing: ['reserveBodyBytes()'],
  onResponse: ['countUnmatchedAnswer()', 'countAnswer()'],
}

/** The hooks of POST /invoke by kind, as Fastify lists them once the app is ready. */
async function invokeHooks(overrides: Partial<Config>): Promise<Record<string, string[]>> {
  const server = await startApp(overrides)
  try {
    const lines = server.app.printRoutes({ includeHooks: true, commonPrefix: false }).split('\n')
    const at = lines.findIndex((line) => /── \/invoke \(POST\)$/.test(line))
    assert.notEqual(at, -1, 'POST /invoke is listed')
    const hooks: Record<string, string[]> = {}
    for (const line of lines.slice(at + 1)) {
      const hook = /• \((\w+)\) (\[.*\])$/.exec(line)
      if (hook === null) break
      hooks[hook[1] as string] = JSON.parse(hook[2] as string) as string[]
    }
    return hooks
  } finally {
    await server.close()
  }
}

test('with every optional feature off, POST /invoke passes only the hooks every request needs', async () => {
  assert.deepEqual(await invokeHooks({}), ALWAYS)
})

test('each optional feature, switched on, adds its hooks to POST /invoke', async (t) => {
  const features: Record<string, Partial<Config>> = {
    'API keys': { apiKeys: [createHash('sha256').update('ak_hooks_test').digest('hex')] },
    'rate limits': { rateLimit: 100, rateLimitWindowMs: 60_000 },
    CORS: { corsOrigins: ['https://app.example.com'] },
  }
  for (const [name, settings] of Object.entries(features)) {
    await t.test(name, async () => {
      const hooks = await invokeHooks(settings)
      assert.notDeepEqual(hooks, ALWAYS, `${name} on: ${JSON.stringify(hooks)}`)
    })
  }
})

// Starts the real service (job store in a fresh temporary data directory, worker pool, job runner,
// webhook dispatcher, HTTP app) on port 0 for a test file, and removes everything it started.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { type Config, defaultConfig } from '../../src/config.js'
import { createService, type Service, type ServiceOptions } from '../../src/service.js'

export interface TestApp {
  url: string
  app: FastifyInstance
  service: Service
  config: Config
  close(): Promise<void>
}

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'algoserve-test-'))
}

function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...defaultConfig(), port: 0, workerThreads: 2, logLevel: 'silent', ...overrides }
}

export async function startApp(
  overrides: Partial<Config> = {},
  options: ServiceOptions = {},
): Promise<TestApp> {
  const ownDataDir = overrides.dataDir === undefined
  const config = testConfig({ dataDir: overrides.dataDir ?? tempDataDir(), ...overrides })
  const service = await createService(config, options)
  await service.app.listen({ host: '127.0.0.1', port: 0 })
  service.start()
  const address = service.app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return {
    url: `http://127.0.0.1:${address.port}`,
    app: service.app,
    service,
    config,
    close: async () => {
      await service.shutdown(0)
      if (ownDataDir) rmSync(config.dataDir, { recursive: true, force: true })
    },
  }
}

/** POSTs a raw body (a string, sent as is) with the given content type. */
export async function postRaw(
  url: string,
  body: string | undefined,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const response = await fetch(url, { method: 'POST', body, headers })
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

/** POST /invoke of {"number": 97} with these headers (an API key, a request id). */
export function invoke97(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{"number": 97}',
  })
}

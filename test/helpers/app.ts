// Starts the real app on a real port (0) for a test file, and closes everything it started.
import type { FastifyInstance } from 'fastify'
import { type AppDependencies, buildApp } from '../../src/app.js'
import { type Config, defaultConfig } from '../../src/config.js'
import { Executor } from '../../src/executor.js'
import { createMetrics, type Metrics } from '../../src/metrics.js'

export interface TestApp {
  url: string
  app: FastifyInstance
  metrics: Metrics
  executor: Executor
  config: Config
  setShuttingDown(value: boolean): void
  close(): Promise<void>
}

export async function startApp(
  overrides: Partial<Config> = {},
  deps: Pick<AppDependencies, 'algorithms'> = {},
): Promise<TestApp> {
  const config: Config = { ...defaultConfig(), port: 0, workerThreads: 2, logLevel: 'silent', ...overrides }
  const metrics = createMetrics()
  const executor = new Executor({ threads: config.workerThreads }, metrics)
  let shuttingDown = false
  const app = await buildApp(config, { ...deps, executor, metrics, isShuttingDown: () => shuttingDown })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    metrics,
    executor,
    config,
    setShuttingDown: (value) => {
      shuttingDown = value
    },
    close: async () => {
      await app.close()
      await executor.close()
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

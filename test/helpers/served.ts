// The service for tests that speak to it only through HTTP. Normally it runs in the test's process
// (startApp). With ALGOSERVE_TEST_HTTP_PROCESSES=N above 1 (CI's matrix entry, .ci/http-processes.sh) it
// is the real command line, `algoserve serve --http-processes N` in a child process on a free port, so
// that the same tests show the contract holding whichever of the N processes answers each request, on
// either backend (with the embedded store, the primary keeps it and the processes ask it for the jobs).
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { hostname } from 'node:os'
import type { Dispatcher } from 'undici'
import { type Config, defaultConfig, SETTINGS } from '../../src/config.js'
import { startApp, tempDataDir } from './app.js'
import { type Child, listening, loggedLines, start } from './child.js'
import { until } from './time.js'

export const HTTP_PROCESSES_VARIABLE = 'ALGOSERVE_TEST_HTTP_PROCESSES'

/** The HTTP processes the served tests ask for: 1 (in this process) unless the variable says more. */
export const TEST_HTTP_PROCESSES = ((raw: string | undefined) => {
  if (raw === undefined || raw === '') return 1
  const count = Number(raw)
  if (!Number.isInteger(count) || count < 1) throw new Error(`${HTTP_PROCESSES_VARIABLE} must be 1 or more`)
  return count
})(process.env[HTTP_PROCESSES_VARIABLE])

/**
 * Each request on a connection of its own, closed by the client once its answer is read. The primary
 * hands out connections, not requests: fetch's kept-alive connection would take a test's every request
 * to one process. (Not `connection: close`: undici fails an answer whose body is left unread when the
 * server ends the connection first.) undici is loaded only here: loaded, it puts its own dispatcher under
 * fetch, which the other runs must not have.
 */
if (TEST_HTTP_PROCESSES > 1) {
  const { Client, Dispatcher: Base, setGlobalDispatcher } = await import('undici')
  class ConnectionPerRequest extends Base {
    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const client = new Client(options.origin as string)
      const accepted = client.dispatch(options, handler)
      void client.close()
      return accepted
    }
  }
  setGlobalDispatcher(new ConnectionPerRequest())
}

/** A service that a test reaches by its URL only. */
export interface ServedApp {
  url: string
  /** Its settings, as the service read them. */
  config: Config
  /** What its job metadata's `worker` may be: `hostname:pid` of each process that runs jobs. */
  workers(): string[]
  close(): Promise<void>
}

/** How long a child has to drain and exit at the end of its tests before it is killed. */
const CLOSE_TIMEOUT_MS = 15_000

/**
 * The service with the tests' settings (as startApp's) and `overrides`, in this process or, under the
 * matrix, as `algoserve serve` with TEST_HTTP_PROCESSES processes: ready once every process listens.
 */
export async function serveApp(overrides: Partial<Config> = {}): Promise<ServedApp> {
  if (TEST_HTTP_PROCESSES === 1) {
    const app = await startApp(overrides)
    return { ...app, workers: () => [`${hostname()}:${process.pid}`] }
  }
  const ownDataDir = overrides.dataDir === undefined
  const config: Config = {
    ...defaultConfig(),
    port: 0,
    workerThreads: 2,
    shutdownGraceMs: 0,
    dataDir: overrides.dataDir ?? tempDataDir(),
    ...overrides,
    // Its address is read from its log.
    logLevel: 'info',
    httpProcesses: TEST_HTTP_PROCESSES,
  }
  const child = start(['serve'], settingsAsVariables(config))
  const cleanUp = async () => {
    if (ownDataDir) rmSync(config.dataDir, { recursive: true, force: true })
  }
  try {
    const url = await listening(child)
    // A connection the primary hands to a process as it dies is never answered: each probe is bounded.
    const ready = () =>
      fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) }).then(
        (response) => response.status === 200,
        () => false,
      )
    await until(ready, 60_000, () => `every HTTP process ready:\n${child.output()}`)
    return {
      url,
      config,
      // Each process's pid as its ready line says; a process replaced meanwhile is listed too.
      workers: () =>
        loggedLines<{ pid: number }>(child, '"msg":"ready"').map((line) => `${hostname()}:${line.pid}`),
      async close() {
        if (child.process.exitCode === null && child.process.signalCode === null) {
          child.process.kill('SIGINT')
          const timer = setTimeout(() => child.process.kill('SIGKILL'), CLOSE_TIMEOUT_MS)
          await child.exit
          clearTimeout(timer)
        }
        await cleanUp()
        assertEveryProcessAnswered(child)
      },
    }
  } catch (error) {
    child.process.kill('SIGKILL')
    await cleanUp()
    throw error
  }
}

/** The matrix means nothing unless the tests' requests were spread: each process answered some. */
function assertEveryProcessAnswered(child: Child): void {
  const answered = new Set(
    loggedLines<{ process?: number }>(child, '"msg":"request completed"').map((line) => line.process),
  )
  assert.equal(answered.size, TEST_HTTP_PROCESSES, `the processes that answered: ${[...answered].join()}`)
}

/**
 * Every setting of `config` that differs from its default, as its ALGOSERVE_* variable. A value that
 * a variable cannot say (an object of a test's own) fails here rather than being silently dropped.
 */
function settingsAsVariables(config: Config): Record<string, string> {
  const defaults = defaultConfig() as Record<string, unknown>
  const variables: Record<string, string> = {}
  for (const setting of SETTINGS) {
    const value = (config as Record<string, unknown>)[setting.key]
    if (JSON.stringify(value) === JSON.stringify(defaults[setting.key])) continue
    const text = Array.isArray(value) ? value.join(',') : value === null ? '' : String(value)
    assert.deepEqual(setting.parse(text), value, `${setting.env} cannot say ${JSON.stringify(value)}`)
    variables[setting.env] = text
  }
  return variables
}

/**
 * The skip of a test of a bound that each HTTP process keeps on its own (docs/operating.md#http-processes):
 * spread over N processes, the service holds N times it.
 */
export const perProcessBound =
  TEST_HTTP_PROCESSES > 1 ? `a bound of each HTTP process, and ${TEST_HTTP_PROCESSES} serve` : false

/**
 * The skip, under the matrix, of a test that starts a service of its own in this process (it reads the
 * service's internals, or counts on one process's job slots or threads): the pass with one process ran
 * it as it is, and running it again would only cost time.
 */
export const inProcessOnly =
  TEST_HTTP_PROCESSES > 1 ? 'starts a service of its own in this process: run in the pass with one' : false

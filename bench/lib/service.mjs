// Starting the service for a benchmark, shared by the scripts in TypeScript and those run with plain node: a
// free port, waiting for /readyz, and `algoserve serve` or `algoserve worker` from a checkout's build
// (dist/main.js) or from its sources through tsx. The scripts in shell have the same in common.sh.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

/** The repository's root: the checkout a script measures unless it is given another. */
export const ROOT = join(import.meta.dirname, '../..')

/** A free TCP port of the loopback interface, closed again so that the caller binds it next. */
export async function freePort() {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address()
  server.close()
  await once(server, 'close')
  return port
}

/**
 * Polls `${url}/readyz` every `everyMs` until it answers 200; throws after `timeoutMs`, or as soon as `child`
 * (when given) has exited, since nothing will answer then.
 */
export async function waitReady(url, { timeoutMs = 60_000, everyMs = 50, child } = {}) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    )
    if (ready) return
    if (child !== undefined && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(
        `${url}: the process exited (${child.exitCode ?? child.signalCode}) before it was ready`,
      )
    }
    if (Date.now() > deadline) throw new Error(`no answer from ${url}/readyz`)
    await sleep(everyMs)
  }
}

/**
 * Starts `algoserve <role>` from `checkout` on a port (a free one unless given: ALGOSERVE_PORT for serve,
 * ALGOSERVE_WORKER_PORT for a worker's /readyz) and waits until it is ready. `from: 'dist'` runs the build,
 * `'src'` the sources through tsx; `nodeFlags` go before either. `stop()` sends SIGTERM and waits for the
 * exit.
 */
export async function startService({
  checkout = ROOT,
  from = 'dist',
  role = 'serve',
  args = [],
  nodeFlags = [],
  env = {},
  stdio = ['ignore', 'ignore', 'inherit'],
  port,
  timeoutMs = 60_000,
  everyMs = 50,
}) {
  const chosen = port ?? (await freePort())
  const main = from === 'dist' ? ['dist/main.js'] : ['--import', 'tsx', 'src/main.ts']
  const portVariable = role === 'serve' ? 'ALGOSERVE_PORT' : 'ALGOSERVE_WORKER_PORT'
  const child = spawn(process.execPath, [...nodeFlags, ...main, role, ...args], {
    cwd: checkout,
    env: { ...process.env, ...env, [portVariable]: String(chosen) },
    stdio,
  })
  const url = `http://127.0.0.1:${chosen}`
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    await exited
  }
  try {
    await waitReady(url, { timeoutMs, everyMs, child })
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  return { child, port: chosen, url, stop }
}

// The service as operators run it: `algoserve serve` in a child process, through tsx.
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { rmSync } from 'node:fs'
import { after, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { tempDataDir } from './app.js'
import { until } from './time.js'

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url))

export interface Child {
  process: ChildProcess
  output: () => string
  /** What it wrote to stderr alone (its log goes to stdout). */
  stderr: () => string
  exit: Promise<number | null>
}

// A test that fails half-way leaves no service behind: it would keep its test file from ending.
const started = new Set<ChildProcess>()
after(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/**
 * `launcher` is a command the service is run through, such as `ip netns exec NAME`; `nodeFlags` are
 * node's own, such as `--max-semi-space-size=1`.
 */
export function start(
  args: string[],
  env: Record<string, string> = {},
  launcher: string[] = [],
  nodeFlags: string[] = [],
): Child {
  const [command = process.execPath, ...before] = [...launcher, process.execPath]
  // The tests' own variables (ALGOSERVE_TEST_*) are no settings: the service would warn of each.
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith('ALGOSERVE_TEST_'))
  const child = spawn(command, [...before, ...nodeFlags, '--import', 'tsx', MAIN, ...args], {
    env: { ...Object.fromEntries(inherited), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  started.add(child)
  let output = ''
  let stderr = ''
  child.stdout?.on('data', (chunk) => {
    output += chunk
  })
  child.stderr?.on('data', (chunk) => {
    output += chunk
    stderr += chunk
  })
  const exit = once(child, 'exit').then(([code]) => code as number | null)
  return { process: child, output: () => output, stderr: () => stderr, exit }
}

/** The child's log lines (JSON) that contain `text`, parsed. */
export function loggedLines<T = Record<string, unknown>>(child: Child, text: string): T[] {
  return child
    .output()
    .split('\n')
    .filter((line) => line.includes(text))
    .map((line) => JSON.parse(line) as T)
}

/** The URL the child listens on, once it does; kills it and fails if it does not start. */
export async function listening(child: Child): Promise<string> {
  const address = () => /Server listening at (http:\/\/127\.0\.0\.1:[0-9]+)/.exec(child.output())?.[1]
  // A child that exits or stays silent is reported below with its output, not as a bare timeout.
  await until(() => address() !== undefined || child.process.exitCode !== null, 60_000, '', 50).catch(
    () => {},
  )
  const url = address()
  if (url !== undefined) return url
  child.process.kill('SIGKILL')
  throw new Error(`the service did not start:\n${child.output()}`)
}

/** `algoserve serve` on a free port with a data directory of its own, removed when the test ends. */
export function serveFresh(t: TestContext, args: string[] = [], env: Record<string, string> = {}): Child {
  const dataDir = tempDataDir()
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  return start(['serve', '--data-dir', dataDir, '--port', '0', ...args], env)
}

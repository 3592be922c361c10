// The command-line client run as a person or a script runs it: `algoserve ...` in a child process
// (through tsx), never through a shell, with only the ALGOSERVE_* variables a test gives.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url))

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `algoserve ...args` to its end. */
export function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('ALGOSERVE_')),
  )
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, ...args],
      { env: { ...clean, ...env }, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
        resolve({ code, stdout, stderr })
      },
    )
  })
}

// The types of service.mjs, whose comments say what each function does.
import type { ChildProcess, StdioOptions } from 'node:child_process'

export const ROOT: string

export function freePort(): Promise<number>

export function waitReady(
  url: string,
  options?: { timeoutMs?: number; everyMs?: number; child?: ChildProcess },
): Promise<void>

export interface StartOptions {
  checkout?: string
  from?: 'dist' | 'src'
  role?: 'serve' | 'worker'
  args?: string[]
  nodeFlags?: string[]
  env?: Record<string, string>
  stdio?: StdioOptions
  port?: number
  timeoutMs?: number
  everyMs?: number
}

export interface StartedService {
  child: ChildProcess
  port: number
  url: string
  stop(): Promise<void>
}

export function startService(options: StartOptions): Promise<StartedService>

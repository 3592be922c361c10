// What an HTTP process and the primary that keeps the embedded store say to each other about jobs, over
// the cluster's IPC channel (structured clones: a Map, a BigInt and a NaN arrive as they were sent).
import type { JobBackend } from '../backend.js'

/** The backend's methods an HTTP process asks the primary to run. */
export const REMOTE_METHODS = [
  'submit',
  'read',
  'cancel',
  'list',
  'summary',
  'deliveries',
  'counts',
  'ping',
  'workers',
  'versionWorkers',
  'expire',
] as const satisfies readonly (keyof JobBackend)[]

export type RemoteMethod = (typeof REMOTE_METHODS)[number]

/** An HTTP process to the primary: run `method` with `args` on the store. */
export interface JobCall {
  type: 'algoserve:jobs'
  id: number
  method: RemoteMethod
  args: unknown[]
}

/** An error as it crosses: its class's name and its own members (its code, status and details). */
export interface SentError {
  name: string
  message: string
  members: Record<string, unknown>
}

/** The primary to the process that asked: what the method gave, or what it threw. */
export interface JobAnswer {
  type: 'algoserve:jobs-answer'
  id: number
  value?: unknown
  error?: SentError
}

/** The primary to every HTTP process: a job ended, or changed (its events' listeners). */
export interface JobEvent {
  type: 'algoserve:job-event'
  event: 'ended' | 'changed'
  id: string
}

// The primary's side of remote/backend.ts: it keeps the embedded store (and runs its jobs and webhooks, as
// one `serve` would), answers each HTTP process's calls on it, and tells every process of each job that
// ends or changes, for the waits and event streams that process holds.
import type { Worker } from 'node:cluster'
import { ofType } from '../../cluster/messages.js'
import type { JobBackend } from '../backend.js'
import { type JobAnswer, type JobCall, type JobEvent, REMOTE_METHODS, type SentError } from './messages.js'

export class JobHost {
  readonly #backend: JobBackend
  readonly #workers = new Set<Worker>()

  /** Listens to the backend's job events from now on. */
  static async over(backend: JobBackend): Promise<JobHost> {
    const host = new JobHost(backend)
    await backend.onEnded((id) => host.#tell({ type: 'algoserve:job-event', event: 'ended', id }))
    await backend.onChanged((id) => host.#tell({ type: 'algoserve:job-event', event: 'changed', id }))
    return host
  }

  private constructor(backend: JobBackend) {
    this.#backend = backend
  }

  /** Answers `worker`'s calls, and tells it of job events, until it exits. */
  attach(worker: Worker): void {
    this.#workers.add(worker)
    worker.once('exit', () => this.#workers.delete(worker))
    worker.on('message', (message: unknown) => {
      const call = ofType<JobCall>(message, 'algoserve:jobs')
      if (call !== undefined) void this.#answer(worker, call)
    })
  }

  async #answer(worker: Worker, { id, method, args }: JobCall): Promise<void> {
    const answer: JobAnswer = { type: 'algoserve:jobs-answer', id }
    try {
      if (!REMOTE_METHODS.includes(method)) throw new Error(`no such job method: ${method}`)
      const call = this.#backend[method] as (...given: unknown[]) => Promise<unknown>
      answer.value = await call.apply(this.#backend, args)
    } catch (error) {
      answer.error = sent(error)
    }
    if (!worker.isConnected()) return
    try {
      worker.send(answer)
    } catch (error) {
      // A value that cannot cross (nothing the store gives should be one): the call fails, not the primary.
      worker.send({ type: 'algoserve:jobs-answer', id, error: sent(error) } satisfies JobAnswer)
    }
  }

  #tell(event: JobEvent): void {
    for (const worker of this.#workers) if (worker.isConnected()) worker.send(event)
  }
}

/** An error as a structured clone carries it: its own members (code, status, details) and its words. */
function sent(error: unknown): SentError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), members: {} }
  const members: Record<string, unknown> = {}
  for (const key of Object.keys(error)) {
    const value = (error as unknown as Record<string, unknown>)[key]
    if (typeof value !== 'function' && key !== 'cause') members[key] = value
  }
  return { name: error.name, message: error.message, members }
}

// The primary's side of remote/backend.ts: it keeps the embedded store (and runs its jobs and webhooks, as
// one `serve` would), answers each HTTP process's calls on it, and tells every process of each job that
// ends or changes, for the waits and event streams that process holds. What it sends each process goes in
// batches, a turn's worth at a time (remote/batch.ts).
import type { Worker } from 'node:cluster'
import { ofType } from '../../cluster/messages.js'
import type { JobBackend } from '../backend.js'
import { Batcher, type JobBatch } from './batch.js'
import { type JobAnswer, type JobCall, type JobEvent, REMOTE_METHODS, type SentError } from './messages.js'

export class JobHost {
  readonly #backend: JobBackend
  readonly #workers = new Map<Worker, Batcher>()

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
    const batcher = new Batcher(
      (batch) => {
        if (worker.isConnected()) worker.send(batch)
      },
      (message, error) => {
        // A value that cannot cross (nothing the store gives should be one): the call fails, not the primary.
        if (message.type === 'algoserve:jobs-answer')
          batcher.push({ type: 'algoserve:jobs-answer', id: message.id, error: sent(error) })
      },
    )
    this.#workers.set(worker, batcher)
    worker.once('exit', () => {
      batcher.discard()
      this.#workers.delete(worker)
    })
    worker.on('message', (message: unknown) => {
      const batch = ofType<JobBatch>(message, 'algoserve:jobs-batch')
      if (batch === undefined) return
      for (const call of batch.messages) if (call.type === 'algoserve:jobs') void this.#answer(batcher, call)
    })
  }

  async #answer(batcher: Batcher, { id, method, args }: JobCall): Promise<void> {
    const answer: JobAnswer = { type: 'algoserve:jobs-answer', id }
    try {
      if (!REMOTE_METHODS.includes(method)) throw new Error(`no such job method: ${method}`)
      const call = this.#backend[method] as (...given: unknown[]) => Promise<unknown>
      answer.value = await call.apply(this.#backend, args)
    } catch (error) {
      answer.error = sent(error)
    }
    batcher.push(answer)
  }

  #tell(event: JobEvent): void {
    for (const batcher of this.#workers.values()) batcher.push(event)
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

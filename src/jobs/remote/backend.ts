// The job backend of an HTTP process beside others (ALGOSERVE_HTTP_PROCESSES above 1) when the jobs are in
// the embedded store: the primary keeps the store and runs the jobs and webhooks (remote/host.ts), and each
// HTTP process asks it over the cluster's IPC channel. Its errors come back as the classes they were
// thrown as, so that a client sees exactly what one process would have answered. Calls go in batches, a
// turn's worth at a time, and come back so (remote/batch.ts).
import { EventEmitter } from 'node:events'
import { ofType } from '../../cluster/messages.js'
import * as errors from '../../errors.js'
import { StoreUnavailableError } from '../../errors.js'
import type { BackendCapabilities, Consumer, JobBackend } from '../backend.js'
import { Batcher, type JobBatch, type JobMessage } from './batch.js'
import type { RemoteMethod, SentError } from './messages.js'

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void }

export class RemoteBackend implements JobBackend {
  /** Its jobs are kept and run by another process: this one never takes them. */
  readonly capabilities: BackendCapabilities = { shared: true }
  readonly #pending = new Map<number, Pending>()
  readonly #events = new EventEmitter().setMaxListeners(0)
  readonly #batcher = new Batcher(
    (batch) => {
      if (process.connected) process.send?.(batch)
    },
    (message, error) => {
      if (message.type === 'algoserve:jobs') this.#settle(message.id, undefined, error as Error)
    },
  )
  #calls = 0

  constructor() {
    process.on('message', this.#onMessage)
    // The primary is gone: nothing will answer, and the process is on its way out with it.
    process.once('disconnect', () => {
      this.#batcher.discard()
      for (const { reject } of this.#pending.values())
        reject(new StoreUnavailableError('the process that keeps the jobs is gone'))
      this.#pending.clear()
    })
  }

  readonly #onMessage = (message: unknown) => {
    const batch = ofType<JobBatch>(message, 'algoserve:jobs-batch')
    if (batch !== undefined) for (const each of batch.messages) this.#take(each)
  }

  #take(message: JobMessage): void {
    if (message.type === 'algoserve:jobs-answer')
      this.#settle(message.id, message.value, message.error && revive(message.error))
    else if (message.type === 'algoserve:job-event') this.#events.emit(message.event, message.id)
  }

  #settle(id: number, value: unknown, error: Error | undefined): void {
    const pending = this.#pending.get(id)
    this.#pending.delete(id)
    if (error !== undefined) pending?.reject(error)
    else pending?.resolve(value)
  }

  #call<T>(method: RemoteMethod, ...args: unknown[]): Promise<T> {
    if (!process.connected)
      return Promise.reject(new StoreUnavailableError('the process that keeps the jobs is gone'))
    const id = this.#calls++
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      this.#batcher.push({ type: 'algoserve:jobs', id, method, args })
    })
  }

  submit: JobBackend['submit'] = (...args) => this.#call('submit', ...args)
  read: JobBackend['read'] = (...args) => this.#call('read', ...args)
  cancel: JobBackend['cancel'] = (...args) => this.#call('cancel', ...args)
  list: JobBackend['list'] = (...args) => this.#call('list', ...args)
  summary: JobBackend['summary'] = (...args) => this.#call('summary', ...args)
  deliveries: JobBackend['deliveries'] = (...args) => this.#call('deliveries', ...args)
  counts: JobBackend['counts'] = () => this.#call('counts')
  ping: JobBackend['ping'] = () => this.#call<boolean>('ping').catch(() => false)
  workers: JobBackend['workers'] = () => this.#call('workers')
  versionWorkers: JobBackend['versionWorkers'] = () => this.#call('versionWorkers')
  expire: JobBackend['expire'] = (...args) => this.#call('expire', ...args)

  async onEnded(listener: (id: string) => void): Promise<void> {
    this.#events.on('ended', listener)
  }

  async onChanged(listener: (id: string) => void): Promise<void> {
    this.#events.on('changed', listener)
  }

  consumeJobs(): Consumer {
    throw new Error('the jobs of the embedded store are run by the primary that keeps it')
  }

  consumeDeliveries(): Consumer {
    throw new Error('the webhooks of the embedded store are sent by the primary that keeps it')
  }

  async close(): Promise<void> {
    this.#batcher.flush()
    process.off('message', this.#onMessage)
  }
}

const ERROR_CLASSES = errors as unknown as Record<string, unknown>

/** The error as it was thrown in the primary: its class (one of errors.ts) and its own members. */
function revive({ name, message, members }: SentError): Error {
  const Class = ERROR_CLASSES[name]
  const error: Error =
    typeof Class === 'function' && Class.prototype instanceof Error
      ? Object.create(Class.prototype as object)
      : new Error()
  Object.assign(error, members, { message, name })
  Error.captureStackTrace(error)
  return error
}

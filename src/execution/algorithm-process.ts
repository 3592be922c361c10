// One process of a process algorithm: started in its own process group, one call at a time over JSON
// lines (process-protocol.ts), its stderr to the log tagged with the algorithm. A call ends with the
// process's answer; a time limit, an abort, a line that breaks the protocol or an exit end it too, and
// then the process is stopped (SIGTERM, SIGKILL after a grace, on the whole group) and the call fails
// once it is gone, so that its successor never shares the CPU with it.
import { type ChildProcess, spawn } from 'node:child_process'
import type { FastifyBaseLogger } from 'fastify'
import type { ProcessSpec } from '../algorithms/algorithm.js'
import { RunTimeLimitError } from '../errors.js'
import { type OutputRead, ProcessOutput } from './process-output.js'
import { LineReader, type OutputLimits, ProtocolError, requestLine } from './process-protocol.js'
import { RunFailure } from './timed-run.js'

/** Between SIGTERM and SIGKILL, and between closing stdin at a shutdown and SIGTERM. */
export const KILL_GRACE_MS = 1000
/** A stderr line longer than this is logged cut. */
const MAX_LOG_LINE_BYTES = 16 * 1024

export type Progress = (fraction: number, message?: string) => void

export interface CallOptions {
  /** The hard limit, in ms; sent to the process as `timeout_ms`. */
  timeoutMs?: number
  signal?: AbortSignal
  progress?: Progress
}

interface PendingCall {
  id: string
  resolve(result: unknown): void
  reject(reason: unknown): void
  progress: Progress | undefined
}

export interface ProcessOptions {
  name: string
  spec: ProcessSpec
  log: FastifyBaseLogger
  /** The bounds of its stdout lines, by kind. */
  limits: OutputLimits
  /** The algorithm's result schema: long results are checked against it where they are read. */
  resultSchema: unknown
}

export class AlgorithmProcess {
  readonly #name: string
  readonly #child: ChildProcess
  readonly #log: FastifyBaseLogger
  #pending: PendingCall | undefined
  /** Why the process is being stopped: the pending call fails with it once the process is gone. */
  #stopReason: unknown
  #nextId = 0
  #exited = false
  /** Resolves once the process is gone (or never started), with how it ended, for messages. */
  readonly exited: Promise<string>
  /** Resolves once the process runs; rejects with why it could not start. */
  readonly started: Promise<void>
  readonly startedAt = Date.now()

  constructor({ name, spec, log, limits, resultSchema }: ProcessOptions) {
    this.#name = name
    this.#log = log
    // Its own process group: a signal to the group reaches what it started too, and a Ctrl-C meant for
    // the service reaches the service alone, which stops its processes in order.
    this.#child = spawn(spec.command[0] as string, spec.command.slice(1), {
      cwd: spec.cwd,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const child = this.#child
    this.started = new Promise((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', reject)
    })
    // An unhandled rejection would end the service: whoever starts the process reads `started`.
    this.started.catch(() => {})
    this.exited = new Promise((resolve) => {
      const end = (how: string) => {
        if (this.#exited) return
        this.#exited = true
        const pending = this.#pending
        this.#pending = undefined
        pending?.reject(this.#stopReason ?? new RunFailure(`its process ${how} during the call`))
        resolve(how)
      }
      child.once('error', (error) =>
        end(`could not start (${(error as NodeJS.ErrnoException).code ?? error.message})`),
      )
      // Anything it left running in its group goes with it.
      child.once('exit', () => this.#signalGroup('SIGKILL'))
      // Once its stdout is read to the end: an answer written just before exiting still counts.
      child.once('close', (code, signal) =>
        end(code === null ? `was killed by ${signal}` : `exited with code ${code}`),
      )
    })
    // A process that is gone answers writes with EPIPE; its exit is what counts.
    child.stdin?.on('error', () => {})
    const stdout = new ProcessOutput(limits, resultSchema, (read) => this.#onLine(read))
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk))
    const logLine = (line: string) => this.#log.info({ algorithm: name, pid: child.pid }, line)
    const stderr = new LineReader(MAX_LOG_LINE_BYTES, logLine, logLine)
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk))
  }

  get pid(): number | undefined {
    return this.#child.pid
  }

  /** The calls it was given. */
  get calls(): number {
    return this.#nextId
  }

  /** Stopped by us (a time limit, an abort, a broken protocol, a shutdown), not by itself. */
  get stopped(): boolean {
    return this.#stopReason !== undefined
  }

  /** Alive and not being stopped: it may take a call. */
  get usable(): boolean {
    return !this.#exited && this.#stopReason === undefined
  }

  /** One call; the process must be usable and free. Rejects with RunFailure, RunTimeLimitError or the signal's reason. */
  call(params: unknown, { timeoutMs, signal, progress }: CallOptions = {}): Promise<unknown> {
    const id = String(this.#nextId++)
    return new Promise<unknown>((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => this.stop(new RunTimeLimitError(this.#name, timeoutMs)), timeoutMs)
      const onAbort = () => this.stop(signal?.reason)
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      }
      this.#pending = {
        id,
        progress,
        resolve: (result) => {
          done()
          resolve(result)
        },
        reject: (reason) => {
          done()
          reject(reason)
        },
      }
      if (signal?.aborted) return onAbort()
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#child.stdin?.write(requestLine(id, params, timeoutMs ?? null))
    })
  }

  /** A line of its stdout, read (process-output.ts): a message, or how the line broke the protocol. */
  #onLine(message: OutputRead): void {
    if (this.#stopReason !== undefined) return
    const pending = this.#pending
    if (message instanceof ProtocolError) {
      this.#breach(message)
      return
    }
    if (pending === undefined || message.id !== pending.id) {
      this.#breach(new ProtocolError('its process wrote a message for no call it was given'))
      return
    }
    if (message.kind === 'progress') {
      try {
        pending.progress?.(message.fraction, message.message)
      } catch (error) {
        // The caller's hook failing is no reason to stop the run, nor the service.
        this.#log.error({ err: error, algorithm: this.#name }, 'a progress hook failed')
      }
      return
    }
    this.#pending = undefined
    if (message.kind === 'result') pending.resolve(message.result)
    else pending.reject(new RunFailure(message.error))
  }

  #breach(error: ProtocolError): void {
    this.#log.warn({ algorithm: this.#name, pid: this.#child.pid }, `stopping a process: ${error.message}`)
    this.stop(new RunFailure(error.message))
  }

  /** SIGTERM, then SIGKILL after the grace; the pending call, if any, fails with `reason` once it is gone. */
  stop(reason: unknown): Promise<string> {
    if (this.#stopReason === undefined && !this.#exited) {
      this.#stopReason = reason
      this.#signalGroup('SIGTERM')
      const kill = setTimeout(() => this.#signalGroup('SIGKILL'), KILL_GRACE_MS)
      this.exited.then(() => clearTimeout(kill))
    }
    return this.exited
  }

  /** At a shutdown: stdin closed (the protocol's "stop"), then stop() if it has not exited within the grace. */
  async close(): Promise<void> {
    if (this.#exited) return
    this.#child.stdin?.end()
    const grace = setTimeout(() => this.stop(new RunFailure('the service is shutting down')), KILL_GRACE_MS)
    await this.exited
    clearTimeout(grace)
  }

  #signalGroup(signal: NodeJS.Signals): void {
    const pid = this.#child.pid
    if (pid === undefined) return
    try {
      process.kill(-pid, signal)
    } catch {
      // The group is gone already.
    }
  }
}

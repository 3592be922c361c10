// One process of a process algorithm: started in its own process group, one call at a time over JSON
// lines (process-protocol.ts), its stderr to the log tagged with the algorithm and the call, within the
// algorithm's budget (log-budget.ts). A call ends with the process's answer; a time limit, an abort, a
// line that breaks the protocol or an exit end it too, and then the process is stopped (SIGTERM, SIGKILL
// after a grace, on the whole group) and the call fails once it is gone, so that its successor never
// shares the CPU with it. A message for any call but the running one is logged and dropped: what a
// program writes out of turn costs no other call.
import type { ChildProcess } from 'node:child_process'
import type { FastifyBaseLogger } from 'fastify'
import type { ProcessSpec } from '../algorithms/algorithm.js'
import { ProcessStateError, RunTimeLimitError } from '../errors.js'
import { InputRejected } from './input-rejection.js'
import type { LogBudget } from './log-budget.js'
import { type OutputRead, ProcessOutput } from './process-output.js'
import { signalProcess } from './process-owner.js'
import {
  LineReader,
  type OutputLimits,
  type ProcessMessage,
  ProtocolError,
  requestLine,
} from './process-protocol.js'
import { exitDuringCall, launchProgram, onProgramEnd, type Program } from './program-launch.js'
import type { LogContext, Progress, RunOptions } from './run-way.js'
import { RunFailure } from './timed-run.js'

/** Between SIGTERM and SIGKILL, and between closing stdin at a shutdown and SIGTERM. */
export const KILL_GRACE_MS = 1000
/** A stderr line longer than this is logged cut. */
const MAX_LOG_LINE_BYTES = 16 * 1024

/**
 * Where a process is: `starting` until it runs, `idle` between calls, `busy` with one, `stopping` once
 * we stopped it or it exited by itself (it takes no call from then on), `gone` once it is reaped.
 */
export type ProcessState = 'starting' | 'idle' | 'busy' | 'stopping' | 'gone'

/** The moves a process makes; any other is a bug (ProcessStateError). */
const NEXT: Record<ProcessState, readonly ProcessState[]> = {
  starting: ['idle', 'stopping', 'gone'],
  idle: ['busy', 'stopping', 'gone'],
  busy: ['idle', 'stopping', 'gone'],
  stopping: ['gone'],
  gone: [],
}

/** A call's options (run-way.ts); its hard limit is sent to the process as `timeout_ms`. */
export type CallOptions = Pick<RunOptions, 'timeoutMs' | 'signal' | 'progress' | 'logContext' | 'trace'>

interface PendingCall {
  id: string
  resolve(result: unknown): void
  reject(reason: unknown): void
  progress: Progress | undefined
  logContext: LogContext | undefined
  /** The process wrote a message for it. */
  heard: boolean
}

export interface ProcessOptions {
  name: string
  spec: ProcessSpec
  log: FastifyBaseLogger
  /** The algorithm's share of the log for stderr lines, and for warnings of messages out of turn. */
  budgets: { stderr: LogBudget; strays: LogBudget }
  /** The bounds of its stdout lines, by kind. */
  limits: OutputLimits
  /** The algorithm's result schema: long results are checked against it where they are read. */
  resultSchema: unknown
  /** Its memory limit, in MB; 0 for none. */
  memoryMb?: number
}

/**
 * The call's process exited with code 0 after answering its previous call, without a word for this one:
 * a program that answers once and exits, whose exit came after the call was written to it. The call
 * never ran; the pool hands it to another process.
 */
export class ExitedBeforeTheCall extends RunFailure {}

export class AlgorithmProcess {
  readonly #name: string
  readonly #program: Program
  readonly #child: ChildProcess
  readonly #log: FastifyBaseLogger
  readonly #strays: LogBudget
  #state: ProcessState = 'starting'
  #pending: PendingCall | undefined
  /** Whom the last call given ran for: its process's stderr lines name it. */
  #lastContext: LogContext | undefined
  /** Why we stop the process: the pending call fails with it once the process is gone. */
  #stopReason: unknown
  #nextId = 0
  /** The calls it answered. */
  #answers = 0
  /** Resolves once the process is gone (or never started), with how it ended, for messages. */
  readonly exited: Promise<string>
  /** Resolves once the process runs; rejects with why it could not start. */
  readonly started: Promise<void>
  readonly startedAt = Date.now()

  constructor({ name, spec, log, budgets, limits, resultSchema, memoryMb = 0 }: ProcessOptions) {
    this.#name = name
    this.#log = log
    this.#strays = budgets.strays
    this.#program = launchProgram(spec, memoryMb)
    this.#child = this.#program.child
    const child = this.#child
    this.started = new Promise((resolve, reject) => {
      child.once('spawn', () => {
        if (this.#state === 'starting') this.#to('idle')
        resolve()
      })
      child.once('error', reject)
    })
    // An unhandled rejection would end the service: whoever starts the process reads `started`.
    this.started.catch(() => {})
    const stdout = new ProcessOutput(limits, resultSchema, (read: OutputRead) =>
      read instanceof ProtocolError ? this.#breach(read) : this.#onLine(read),
    )
    this.exited = new Promise((resolve) => {
      const end = (how: string) => {
        if (this.#state === 'gone') return
        this.#to('gone')
        const pending = this.#pending
        this.#pending = undefined
        if (pending !== undefined) pending.reject(this.#stopReason ?? this.#exitFailure(how, pending))
        resolve(how)
      }
      child.once('error', (error) =>
        end(`could not start (${(error as NodeJS.ErrnoException).code ?? error.message})`),
      )
      // Exited between calls: no call is handed to it while what it wrote before is read.
      child.once('exit', () => {
        if (this.#state === 'idle' || this.#state === 'starting') this.#to('stopping')
      })
      // At its exit, with what it wrote before read (a long line on the output thread too): an answer
      // written just before exiting still counts.
      onProgramEnd(this.#program, (how) => stdout.delivered().then(() => end(how)))
    })
    // A process that is gone answers writes with EPIPE; its exit is what counts.
    child.stdin?.on('error', () => {})
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk))
    const logLine = (line: string) => {
      if (budgets.stderr.take(Buffer.byteLength(line)))
        this.#log.info({ algorithm: name, pid: child.pid, ...this.#lastContext }, line)
    }
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

  get state(): ProcessState {
    return this.#state
  }

  /** Stopped by us (a time limit, an abort, a broken protocol, a shutdown), not by itself. */
  get stopped(): boolean {
    return this.#stopReason !== undefined
  }

  /** Its exit code once it exited by itself; otherwise null. */
  get exitCode(): number | null {
    return this.#child.exitCode
  }

  /**
   * One call; the process must be idle (else ProcessStateError). Rejects with RunFailure (or
   * ExitedBeforeTheCall), RunTimeLimitError or the signal's reason.
   */
  call(
    params: unknown,
    { timeoutMs, signal, progress, logContext, trace }: CallOptions = {},
  ): Promise<unknown> {
    this.#to('busy')
    const id = String(this.#nextId++)
    // Until the next call: stderr and stdout are two pipes, and what a call wrote on stderr may be read
    // after its answer.
    this.#lastContext = logContext
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
        logContext,
        heard: false,
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
      this.#child.stdin?.write(requestLine(id, params, timeoutMs ?? null, trace))
    })
  }

  #onLine(message: ProcessMessage): void {
    const pending = this.#pending
    if (this.#state !== 'busy' || pending === undefined || message.id !== pending.id) {
      this.#stray(message)
      return
    }
    pending.heard = true
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
    this.#answers++
    this.#to('idle')
    if (message.kind === 'result') pending.resolve(message.result)
    else if (message.invalidParams === undefined) pending.reject(new RunFailure(message.error))
    else pending.reject(new InputRejected(message.error, message.invalidParams.field))
  }

  /**
   * A message for no running call: a second answer, one after its call's time limit or abort, one for
   * an id never given. The call it was for has ended already, and none other is its business.
   */
  #stray(message: ProcessMessage): void {
    if (!this.#strays.take(0)) return
    const given = /^(0|[1-9][0-9]{0,15})$/.test(message.id) && Number(message.id) < this.#nextId
    this.#log.warn(
      { algorithm: this.#name, pid: this.#child.pid, ...(given ? { call: message.id } : {}) },
      given
        ? `dropped a ${message.kind} message for the call ${message.id}, which had ended`
        : `dropped a ${message.kind} message for no call its process was given`,
    )
  }

  /** Why the pending call failed when the process exited by itself. */
  #exitFailure(how: string, pending: PendingCall): RunFailure {
    const message = exitDuringCall(this.#program, how)
    return !pending.heard && this.#answers > 0 && this.#child.exitCode === 0
      ? new ExitedBeforeTheCall(message)
      : new RunFailure(message)
  }

  #to(next: ProcessState): void {
    if (!NEXT[this.#state].includes(next))
      throw new ProcessStateError(`a process of '${this.#name}' cannot go from ${this.#state} to ${next}`)
    this.#state = next
  }

  #breach(error: ProtocolError): void {
    // Once it is on its way out, what it writes changes nothing.
    if (this.#state === 'stopping' || this.#state === 'gone') return
    this.#log.warn({ algorithm: this.#name, pid: this.#child.pid }, `stopping a process: ${error.message}`)
    this.stop(new RunFailure(error.message))
  }

  /** SIGTERM, then SIGKILL after the grace; the pending call, if any, fails with `reason` once it is gone. */
  stop(reason: unknown): Promise<string> {
    if (this.#state !== 'stopping' && this.#state !== 'gone') {
      this.#stopReason = reason
      this.#to('stopping')
      this.#signalGroup('SIGTERM')
      const kill = setTimeout(() => this.#signalGroup('SIGKILL'), KILL_GRACE_MS)
      this.exited.then(() => clearTimeout(kill))
    }
    return this.exited
  }

  /**
   * At a shutdown: stdin closed (the protocol's "stop"), then stop() if it has not exited within the grace.
   */
  async close(): Promise<void> {
    if (this.#state === 'gone') return
    this.#child.stdin?.end()
    const grace = setTimeout(() => this.stop(new RunFailure('the service is shutting down')), KILL_GRACE_MS)
    await this.exited
    clearTimeout(grace)
  }

  #signalGroup(name: NodeJS.Signals): void {
    if (this.#child.pid !== undefined) signalProcess(-this.#child.pid, name)
  }
}

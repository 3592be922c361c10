// The job messages for one process, gathered over a turn of the event loop and sent as one. Each send over
// the IPC channel is a serialisation and a write of its own, and a small job costs several messages (its
// call, its answer, its changes and its end, told to every process): under load a turn holds many of
// them, and one send carries them all. A turn later at most, never held longer.
import type { JobAnswer, JobCall, JobEvent } from './messages.js'

export type JobMessage = JobCall | JobAnswer | JobEvent

/** Several job messages in the order they were given. */
export interface JobBatch {
  type: 'algoserve:jobs-batch'
  messages: JobMessage[]
}

export class Batcher {
  readonly #send: (batch: JobBatch) => void
  readonly #unsendable: (message: JobMessage, error: unknown) => void
  #messages: JobMessage[] = []
  #due: NodeJS.Immediate | undefined

  /**
   * `send` sends a batch. When it throws (a value in one message cannot cross), each message is sent on
   * its own, and `unsendable` is told of each one that still fails, so that one bad value costs only its
   * own message.
   */
  constructor(send: (batch: JobBatch) => void, unsendable: (message: JobMessage, error: unknown) => void) {
    this.#send = send
    this.#unsendable = unsendable
  }

  push(message: JobMessage): void {
    this.#messages.push(message)
    this.#due ??= setImmediate(this.flush)
  }

  /** Sends what has been gathered now (also at the end of the turn). */
  readonly flush = (): void => {
    if (this.#due !== undefined) clearImmediate(this.#due)
    this.#due = undefined
    const messages = this.#messages
    if (messages.length === 0) return
    this.#messages = []
    try {
      this.#send({ type: 'algoserve:jobs-batch', messages })
    } catch {
      for (const message of messages) {
        try {
          this.#send({ type: 'algoserve:jobs-batch', messages: [message] })
        } catch (error) {
          this.#unsendable(message, error)
        }
      }
    }
  }

  /** Drops what has not been sent: the process on the other side is gone. */
  discard(): void {
    this.#messages = []
    this.flush()
  }
}

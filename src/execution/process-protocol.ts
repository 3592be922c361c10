// The JSON-lines protocol of process algorithms (docs/algorithms.md): a request line written to the
// process's stdin, and the lines it writes back on stdout read into messages. Integers stay exact both
// ways: a BigInt is written as its digits, and an integer a double cannot hold is read as a BigInt.
import { isInteger, isSafeNumber, parse, stringify } from 'lossless-json'
import type { TraceCarrier } from '../tracing/seams.js'

/**
 * A result read off the main thread (process-output.ts): its JSON text as UTF-8, written by lossless-json
 * from what the line held, and already checked against the result schema there.
 */
export class ResultJson {
  constructor(readonly bytes: Buffer) {}

  /** The result as a value; parsed on the calling thread, so only for those that need the value itself. */
  value(): unknown {
    return parse(this.bytes.toString('utf8'), null, exactNumber)
  }
}

export type ProcessMessage =
  | { id: string; kind: 'progress'; fraction: number; message: string | undefined }
  | { id: string; kind: 'result'; result: unknown | ResultJson }
  | { id: string; kind: 'error'; error: string; invalidParams?: InvalidParams }

/** An error line's refusal of the params (`"type": "invalid_params"`), with the member it names if any. */
export interface InvalidParams {
  field: string | undefined
}

/** A line the process wrote that breaks the protocol; the message says how, never what it wrote. */
export class ProtocolError extends Error {}

/** The limits of a process's stdout lines, by kind, in bytes (the algorithm's, else the defaults). */
export interface OutputLimits {
  maxResultBytes: number
  maxProgressBytes: number
}

/** The bound on a line of this kind; an error line is an answer, held to the result's. */
export const limitOf = (limits: OutputLimits, kind: ProcessMessage['kind']): number =>
  kind === 'progress' ? limits.maxProgressBytes : limits.maxResultBytes

/** The failure of a line of this kind past its limit, in the algorithm's terms. */
export function oversized(limits: OutputLimits, kind: ProcessMessage['kind']): ProtocolError {
  const what = { result: 'its result', error: 'its error', progress: 'its progress message' }[kind]
  const member = kind === 'progress' ? 'maxProgressBytes' : 'maxResultBytes'
  return new ProtocolError(`${what} was larger than its limit of ${limitOf(limits, kind)} bytes (${member})`)
}

/** The request line, newline included; `trace` only when the call is traced (docs/algorithms.md). */
export function requestLine(
  id: string,
  params: unknown,
  timeoutMs: number | null,
  trace?: TraceCarrier,
): string {
  const request =
    trace === undefined ? { id, params, timeout_ms: timeoutMs } : { id, params, timeout_ms: timeoutMs, trace }
  let text: string
  try {
    text = JSON.stringify(request)
  } catch {
    // Only params with a BigInt land here: JSON.stringify refuses those, lossless-json writes their digits.
    text = stringify(request) as string
  }
  return `${text}\n`
}

const exactNumber = (text: string): number | bigint =>
  isInteger(text) && !isSafeNumber(text) ? BigInt(text) : Number(text)

/** One line of the process read into a message, or a ProtocolError. */
export function readMessage(
  line: string,
  parseLine = (text: string) => parse(text, null, exactNumber),
): ProcessMessage {
  let value: unknown
  try {
    value = parseLine(line)
  } catch {
    throw new ProtocolError('its process wrote a line that is not JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ProtocolError('its process wrote a line that is not a JSON object')
  const message = value as Record<string, unknown>
  const { id } = message
  if (typeof id !== 'string') throw new ProtocolError("its process wrote a line without a string 'id'")
  if ('result' in message) return { id, kind: 'result', result: message.result }
  if ('error' in message) return { id, kind: 'error', ...readError(message.error) }
  if ('progress' in message) {
    const { progress, message: text } = message
    if (typeof progress !== 'number' || !Number.isFinite(progress))
      throw new ProtocolError("its process wrote a 'progress' that is not a number")
    if (text !== undefined && typeof text !== 'string')
      throw new ProtocolError("its process wrote a progress 'message' that is not a string")
    return { id, kind: 'progress', fraction: Math.min(1, Math.max(0, progress)), message: text }
  }
  throw new ProtocolError("its process wrote a line with none of 'result', 'error' or 'progress'")
}

/**
 * An answer's `error`: a string is the algorithm's failure; an object of type `invalid_params` refuses the
 * params, in its `message`, naming the member in its optional `field` (null is none: Python's None).
 */
function readError(error: unknown): { error: string; invalidParams?: InvalidParams } {
  if (typeof error === 'string') return { error }
  const refusal = error as Record<string, unknown> | null
  if (typeof refusal !== 'object' || refusal === null || Array.isArray(refusal))
    throw new ProtocolError("its process wrote an 'error' that is neither a string nor an object")
  if (refusal.type !== 'invalid_params')
    throw new ProtocolError("its process wrote an 'error' object whose 'type' is not 'invalid_params'")
  const { message, field } = refusal
  if (typeof message !== 'string')
    throw new ProtocolError("its process wrote an 'invalid_params' error without a string 'message'")
  if (field !== undefined && field !== null && typeof field !== 'string')
    throw new ProtocolError("its process wrote an 'invalid_params' error whose 'field' is not a string")
  return { error: message, invalidParams: { field: field ?? undefined } }
}

/**
 * Cuts a stream into lines (without their newline) and calls `onLine` for each; a line that grows past
 * `maxBytes` without its newline is handed to `onOverflow` as it stands, and what follows of it is dropped.
 */
export class LineReader {
  #parts: Buffer[] = []
  #bytes = 0
  #dropping = false

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOverflow: (start: string) => void,
  ) {}

  push(chunk: Buffer): void {
    let from = 0
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, end)
      from = end + 1
      if (this.#dropping) {
        this.#dropping = false
        continue
      }
      if (this.#bytes + piece.length > this.maxBytes) {
        this.#overflow(piece)
        this.#dropping = false
        continue
      }
      const line = this.#parts.length === 0 ? piece : Buffer.concat([...this.#parts, piece])
      this.#parts = []
      this.#bytes = 0
      this.onLine(line.toString('utf8'))
    }
    if (from === chunk.length || this.#dropping) return
    const rest = chunk.subarray(from)
    if (this.#bytes + rest.length > this.maxBytes) {
      this.#overflow(rest)
      return
    }
    this.#parts.push(rest)
    this.#bytes += rest.length
  }

  #overflow(last: Buffer): void {
    const start = Buffer.concat([...this.#parts, last]).subarray(0, this.maxBytes)
    this.#parts = []
    this.#bytes = 0
    this.#dropping = true
    this.onOverflow(start.toString('utf8'))
  }
}

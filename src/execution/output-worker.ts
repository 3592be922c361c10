// The thread that reads a process's long stdout lines (output-thread.ts), so that parsing them, checking a
// result against its schema and writing it back as JSON cost the thread that serves HTTP nothing. A line
// comes as transferred blocks of bytes; a result goes back as transferred JSON bytes, anything else as a
// small message.
import { parentPort } from 'node:worker_threads'
import { compileSchema, type SchemaCheck } from '../algorithms/schema-check.js'
import { parseExact, stringifyExact } from './exact-json.js'
import { type ProcessMessage, readMessage } from './process-protocol.js'
import { resultSchemaFailure } from './timed-run.js'

export interface LineTask {
  seq: number
  /** The line is the first `bytes` bytes of these, in order. */
  blocks: ArrayBuffer[]
  bytes: number
  /** The result schema, as JSON text: also its key among those compiled here. */
  schema: string
}

/** A message as the main thread takes it back: a result's JSON as bytes, or why the line was refused. */
export type LineRead =
  | { id: string; kind: 'progress'; fraction: number; message: string | undefined }
  | { id: string; kind: 'result'; json: ArrayBuffer }
  | Extract<ProcessMessage, { kind: 'error' }>
  | { kind: 'refused'; problem: string }

export interface LineReply {
  seq: number
  read: LineRead
}

const checks = new Map<string, SchemaCheck>()

function read({ blocks, bytes, schema }: LineTask): LineRead {
  let message: ProcessMessage
  let hasBigInts = false
  try {
    const line = Buffer.concat(
      blocks.map((block) => new Uint8Array(block)),
      bytes,
    )
    message = readMessage(line.toString('utf8'), (text) => {
      const parsed = parseExact(text)
      hasBigInts = parsed.hasBigInts
      return parsed.value
    })
  } catch (error) {
    return { kind: 'refused', problem: (error as Error).message }
  }
  if (message.kind !== 'result') return message
  let check = checks.get(schema)
  if (check === undefined) {
    // The process compiled the same schema at its start: it compiles here too.
    check = compileSchema(JSON.parse(schema))
    checks.set(schema, check)
  }
  const issues = check(message.result)
  // The same failure as a result checked on the main thread; the process keeps serving.
  if (issues.length > 0) return { id: message.id, kind: 'error', error: resultSchemaFailure(issues) }
  const text = stringifyExact(message.result, hasBigInts) as string
  // A buffer of its own, not a slice of Node's pool: it is transferred.
  const json = Buffer.allocUnsafeSlow(Buffer.byteLength(text))
  json.write(text)
  return { id: message.id, kind: 'result', json: json.buffer as ArrayBuffer }
}

parentPort?.on('message', (task: LineTask) => {
  const reply: LineReply = { seq: task.seq, read: read(task) }
  parentPort?.postMessage(reply, reply.read.kind === 'result' ? [reply.read.json] : [])
})

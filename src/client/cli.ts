// `algoserve algorithms ...`, `algoserve call ...` and `algoserve jobs ...`: one request (or, for `jobs
// wait`, the job's event stream) to a running service, the answer printed for a person or, with --json,
// exactly as sent.
import { setTimeout as sleep } from 'node:timers/promises'
import { LosslessNumber, parse, stringify } from 'lossless-json'
import {
  CLIENT_USAGE,
  type ClientCommand,
  type ClientOptions,
  EXIT,
  HELP,
  type ProgressMode,
  parseClientArgs,
  USAGE_HINT,
  UsageError,
  type Work,
} from './args.js'
import { bodyText, readEvents } from './event-stream.js'
import {
  formatAlgorithm,
  formatAlgorithms,
  formatCreated,
  formatError,
  formatInvoke,
  formatJob,
  formatList,
  type Progress,
  progressBar,
  progressLine,
  type ServedVersion,
} from './format.js'
import { type Answer, answerOf, ConnectionError, openStream, request, type Target } from './http.js'

type WaitCommand = Extract<ClientCommand, { name: 'wait' }>

export interface Output {
  out(text: string): void
  err(text: string): void
  /** Whether stderr is a terminal (`jobs wait` then draws its progress as a bar). */
  errIsTTY?: boolean
  /** The terminal's width, when stderr is one. */
  errColumns?: number
}

/** The longest hold one `?wait=` asks for (the contract allows up to 60 s). */
const MAX_HOLD_SECONDS = 60
/**
 * Between two reads that came back at once with the job still going (the hold was skipped, or a
 * service without `?wait=`): a pause, so that waiting never turns into a tight loop of requests.
 */
const MIN_POLL_MS = 500

const ended = (status: unknown) => status === 'completed' || status === 'failed'
const path = (id: string) => `/jobs/${encodeURIComponent(id)}`
/** An algorithm's path, or one version's: `Sum@^1` is /algorithms/Sum/versions/%5E1. */
const algorithmPath = (name: string, version: string | null = null) =>
  `/algorithms/${encodeURIComponent(name)}${version === null ? '' : `/versions/${encodeURIComponent(version)}`}`

/** Runs a client command; returns the process's exit code. */
export async function runClient(argv: string[], env: NodeJS.ProcessEnv, output: Output): Promise<number> {
  let options: ClientOptions | typeof HELP
  try {
    options = parseClientArgs(argv, env)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    output.err(`algoserve: ${error.message}\n${USAGE_HINT}\n`)
    return EXIT.usage
  }
  if (options === HELP) {
    output.out(CLIENT_USAGE)
    return EXIT.ok
  }
  try {
    return await execute(options, output)
  } catch (error) {
    if (!(error instanceof ConnectionError)) throw error
    output.err(`algoserve: ${error.message}\n`)
    return EXIT.connection
  }
}

async function execute(options: ClientOptions, output: Output): Promise<number> {
  const { command } = options
  const target: Target = { url: options.url, apiKey: options.apiKey }
  if (command.name === 'wait') return waitFor(target, command, options.json, output)
  const answer = await send(target, command)
  if (answer.status >= 400) return failed(answer, options.json, output)
  if (options.json) output.out(`${answer.text}\n`)
  else output.out(`${readable(command, answer, options.urlFlag)}\n`)
  return EXIT.ok
}

function send(target: Target, command: Exclude<ClientCommand, { name: 'wait' }>): Promise<Answer> {
  switch (command.name) {
    case 'algorithms':
      return request(
        target,
        'GET',
        command.algorithm === null ? '/algorithms' : algorithmPath(command.algorithm, command.version),
      )
    case 'call': {
      const { work } = command
      return work.algorithm === null
        ? request(target, 'POST', '/invoke', { body: json({ number: new LosslessNumber(work.number) }) })
        : request(target, 'POST', `${algorithmPath(work.algorithm, work.version)}/invoke`, {
            body: json(work.params),
          })
    }
    case 'create': {
      const job: Record<string, unknown> = jobOf(command.work)
      if (command.webhook !== null) job.webhook = command.webhook
      const headers: Record<string, string> =
        command.idempotencyKey === null ? {} : { 'idempotency-key': command.idempotencyKey }
      return request(target, 'POST', '/jobs', { body: json(job), headers })
    }
    case 'get':
      // With its params: what was asked is half of what a failed job says.
      return request(target, 'GET', `${path(command.id)}?include=params`)
    case 'cancel':
      return request(target, 'POST', `${path(command.id)}/cancel`)
    case 'list': {
      const query = new URLSearchParams()
      if (command.status !== null) query.set('status', command.status)
      if (command.algorithm !== null) query.set('algorithm', command.algorithm)
      if (command.limit !== null) query.set('limit', command.limit)
      if (command.cursor !== null) query.set('cursor', command.cursor)
      const search = query.size === 0 ? '' : `?${query}`
      return request(target, 'GET', `/jobs${search}`)
    }
  }
}

/** JSON text with every digit of the LosslessNumbers in it. */
const json = (value: unknown) => stringify(value) as string

const jobOf = (work: Work): Record<string, unknown> =>
  work.algorithm === null
    ? { algorithm: 'PrimeChecker', params: { number: new LosslessNumber(work.number) } }
    : work.version === null
      ? { algorithm: work.algorithm, params: work.params }
      : { algorithm: work.algorithm, version: work.version, params: work.params }

function readable(command: ClientCommand, answer: Answer, urlFlag: string | null): string {
  switch (command.name) {
    case 'algorithms':
      return command.algorithm === null ? formatAlgorithms(answer.body) : formatAlgorithm(answer.body)
    case 'call':
      return formatInvoke(answer.body, versionOf(answer))
    case 'create':
      return formatCreated(
        answer.body,
        answer.headers.get('idempotent-replayed') === 'true',
        versionOf(answer),
      )
    case 'list':
      return formatList(answer.body, command, urlFlag)
    default:
      return formatJob(answer.body, versionOf(answer))
  }
}

/**
 * The version that served a call or that a job is pinned to, and whether it is deprecated, from the
 * headers.
 */
function versionOf(answer: Answer): ServedVersion | null {
  const version = answer.headers.get('algorithm-version')
  if (version === null) return null
  return {
    version,
    deprecated: answer.headers.get('deprecation') !== null,
    sunset: answer.headers.get('sunset'),
  }
}

function failed(answer: Answer, json: boolean, output: Output): number {
  if (json) output.out(`${answer.text}\n`)
  output.err(`algoserve: ${formatError(answer)}\n`)
  return EXIT.service
}

/** What shows a job's progress while `jobs wait` follows it. */
interface ProgressView {
  show(status: string, progress: Progress | null): void
  /** Takes a drawn bar away, so that the final output starts on a clean line. */
  clear(): void
}

/** The shortest time between two progress lines (a log gets a few a second at most). */
const LINE_INTERVAL_MS = 250

/**
 * The progress goes to stderr, never stdout: stdout carries the job that a script reads or a file
 * keeps, and a person watching a wait whose output is redirected still sees the bar. So it is stderr
 * being a terminal that chooses the bar over lines.
 */
function progressView(mode: ProgressMode, json: boolean, output: Output): ProgressView {
  const chosen = json ? 'none' : mode === 'auto' ? (output.errIsTTY ? 'bar' : 'lines') : mode
  if (chosen === 'none') return { show() {}, clear() {} }
  if (chosen === 'bar') {
    let drawn = ''
    return {
      show(status, progress) {
        // One terminal line at most: a line that wraps could not be redrawn with \r. A terminal that
        // tells no width (0, as under `script`) is taken as 80 columns.
        const width = Math.max(10, (output.errColumns || 80) - 1)
        const line = [...progressBar(status, progress)].slice(0, width).join('')
        if (line === drawn) return
        drawn = line
        output.err(`\r${line}\x1b[K`)
      },
      clear() {
        if (drawn !== '') output.err('\r\x1b[K')
        drawn = ''
      },
    }
  }
  let last = ''
  let lastStatus = ''
  let lastAt = 0
  return {
    show(status, progress) {
      const line = progressLine(status, progress)
      const now = Date.now()
      // A change of state is always told; a change of progress at most once an interval.
      if (line === last || (status === lastStatus && now - lastAt < LINE_INTERVAL_MS)) return
      last = line
      lastStatus = status
      lastAt = now
      output.err(`${line}\n`)
    },
    clear() {},
  }
}

/** Between a stream that was cut and the next (the service's own `retry:`). */
const RECONNECT_MS = 1000

type Followed =
  /** The job's end: the body of GET /jobs/{job_id} as the end event carried it. */
  | { kind: 'end'; text: string }
  /** Its end was seen before (204), or the deadline came: what GET /jobs/{job_id} says now. */
  | { kind: 'read' }
  /** No stream: the service has no events route (404), or holds no more streams (503). */
  | { kind: 'unsupported' }
  | { kind: 'error'; answer: Answer }

/**
 * Follows GET /jobs/{id}/events until its end event or the deadline, showing the progress; a stream
 * that is cut is opened again with the Last-Event-ID seen, so that only what changed is sent again.
 */
async function follow(target: Target, id: string, deadline: number, view: ProgressView): Promise<Followed> {
  let lastEventId = ''
  let status = 'pending'
  let progress: Progress | null = null
  for (;;) {
    const remaining = deadline - Date.now()
    if (remaining <= 0) return { kind: 'read' }
    const signal = AbortSignal.timeout(remaining)
    try {
      const headers: Record<string, string> = lastEventId === '' ? {} : { 'last-event-id': lastEventId }
      const response = await openStream(target, `${path(id)}/events`, headers, signal)
      if (response.status === 204) return { kind: 'read' }
      if (response.status === 404 || response.status === 503) {
        await response.body?.cancel()
        return { kind: 'unsupported' }
      }
      if (response.status !== 200 || response.body === null) {
        const text = await response.text()
        return { kind: 'error', answer: answerOf(response, text) }
      }
      for await (const event of readEvents(bodyText(response.body))) {
        lastEventId = event.id
        if (event.event === 'end') return { kind: 'end', text: event.data }
        const data = JSON.parse(event.data) as { status?: string; progress?: number; message?: string | null }
        if (event.event === 'state') {
          status = String(data.status)
          // A run given back and started again starts its progress again.
          progress = null
        } else if (event.event === 'progress' && typeof data.progress === 'number') {
          progress = { progress: data.progress, message: data.message ?? null }
        } else continue
        view.show(status, progress)
      }
    } catch (error) {
      if (signal.aborted) return { kind: 'read' }
      // The service could not be reached at all: exit 3 as for any command.
      if (error instanceof ConnectionError) throw error
    }
    // The stream closed or broke before the end (a shutdown, a proxy): open it again after a pause.
    const pause = Math.min(RECONNECT_MS, deadline - Date.now())
    if (pause > 0) await sleep(pause)
  }
}

/**
 * Follows the job's events (its progress shown on stderr) until it has ended or the timeout has
 * passed; on a service without them, reads it with `?wait=`. Exit 0 when it completed, 1 when it
 * failed (or the service answered an error), 4 on the timeout.
 */
async function waitFor(target: Target, command: WaitCommand, json: boolean, output: Output) {
  const { id, timeoutSeconds } = command
  const deadline = Date.now() + timeoutSeconds * 1000
  const view = progressView(command.progress, json, output)
  let followed: Followed
  try {
    followed = await follow(target, id, deadline, view)
  } finally {
    view.clear()
  }
  if (followed.kind === 'error') return failed(followed.answer, json, output)
  if (followed.kind === 'end') return printEnded(followed.text, parse(followed.text), json, output)
  return poll(target, id, timeoutSeconds, deadline, json, output)
}

/** Prints the job; its exit code. */
function printEnded(text: string, body: unknown, json: boolean, output: Output): number {
  output.out(json ? `${text}\n` : `${formatJob(body)}\n`)
  return (body as { status?: unknown }).status === 'completed' ? EXIT.ok : EXIT.service
}

/**
 * Reads the job with `?wait=` (at most 60 s a read) until it has ended or the deadline has passed:
 * for a service without events, and for the state a timeout prints (one read when it has passed).
 */
async function poll(
  target: Target,
  id: string,
  timeoutSeconds: number,
  deadline: number,
  json: boolean,
  output: Output,
) {
  for (;;) {
    const started = Date.now()
    const hold = Math.min(MAX_HOLD_SECONDS, Math.max(0, (deadline - started) / 1000))
    const answer = await request(target, 'GET', `${path(id)}?wait=${Number(hold.toFixed(3))}`)
    if (answer.status >= 400) return failed(answer, json, output)
    const job = answer.body as { status?: unknown }
    if (ended(job.status)) return printEnded(answer.text, answer.body, json, output)
    if (Date.now() >= deadline) {
      output.out(json ? `${answer.text}\n` : `${formatJob(answer.body)}\n`)
      output.err(`algoserve: job ${id} is still ${String(job.status)} after ${timeoutSeconds} s\n`)
      return EXIT.waitTimeout
    }
    const pause = Math.min(MIN_POLL_MS - (Date.now() - started), deadline - Date.now())
    if (pause > 0) await sleep(pause)
  }
}

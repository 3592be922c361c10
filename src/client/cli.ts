// `algoserve algorithms ...`, `algoserve call ...` and `algoserve jobs ...`: one request (or, for `jobs
// wait`, a series of held reads) to a running service, the answer printed for a person or, with --json,
// exactly as sent.
import { setTimeout as sleep } from 'node:timers/promises'
import { LosslessNumber, stringify } from 'lossless-json'
import {
  CLIENT_USAGE,
  type ClientCommand,
  type ClientOptions,
  EXIT,
  HELP,
  parseClientArgs,
  USAGE_HINT,
  UsageError,
  type Work,
} from './args.js'
import {
  formatAlgorithm,
  formatAlgorithms,
  formatCreated,
  formatError,
  formatInvoke,
  formatJob,
  formatList,
} from './format.js'
import { type Answer, ConnectionError, request, type Target } from './http.js'

export interface Output {
  out(text: string): void
  err(text: string): void
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
const algorithmPath = (name: string) => `/algorithms/${encodeURIComponent(name)}`

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
  if (command.name === 'wait')
    return waitFor(target, command.id, command.timeoutSeconds, options.json, output)
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
        command.algorithm === null ? '/algorithms' : algorithmPath(command.algorithm),
      )
    case 'call': {
      const { work } = command
      return work.algorithm === null
        ? request(target, 'POST', '/invoke', { body: json({ number: new LosslessNumber(work.number) }) })
        : request(target, 'POST', `${algorithmPath(work.algorithm)}/invoke`, { body: json(work.params) })
    }
    case 'create': {
      const job: Record<string, unknown> = jobOf(command.work)
      if (command.webhook !== null) job.webhook = command.webhook
      const headers: Record<string, string> =
        command.idempotencyKey === null ? {} : { 'idempotency-key': command.idempotencyKey }
      return request(target, 'POST', '/jobs', { body: json(job), headers })
    }
    case 'get':
      return request(target, 'GET', path(command.id))
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
    : { algorithm: work.algorithm, params: work.params }

function readable(command: ClientCommand, answer: Answer, urlFlag: string | null): string {
  switch (command.name) {
    case 'algorithms':
      return command.algorithm === null ? formatAlgorithms(answer.body) : formatAlgorithm(answer.body)
    case 'call':
      return formatInvoke(answer.body)
    case 'create':
      return formatCreated(answer.body, answer.headers.get('idempotent-replayed') === 'true')
    case 'list':
      return formatList(answer.body, command, urlFlag)
    default:
      return formatJob(answer.body)
  }
}

function failed(answer: Answer, json: boolean, output: Output): number {
  if (json) output.out(`${answer.text}\n`)
  output.err(`algoserve: ${formatError(answer)}\n`)
  return EXIT.service
}

/**
 * Reads the job with `?wait=` (at most 60 s a read) until it has ended or the timeout has passed.
 * Exit 0 when it completed, 1 when it failed (or the service answered an error), 4 on the timeout.
 */
async function waitFor(target: Target, id: string, timeoutSeconds: number, json: boolean, output: Output) {
  const deadline = Date.now() + timeoutSeconds * 1000
  for (;;) {
    const started = Date.now()
    const hold = Math.min(MAX_HOLD_SECONDS, Math.max(0, (deadline - started) / 1000))
    const answer = await request(target, 'GET', `${path(id)}?wait=${Number(hold.toFixed(3))}`)
    if (answer.status >= 400) return failed(answer, json, output)
    const job = answer.body as { status?: unknown }
    const done = ended(job.status)
    if (done || Date.now() >= deadline) {
      output.out(json ? `${answer.text}\n` : `${formatJob(answer.body)}\n`)
      if (!done) {
        output.err(`algoserve: job ${id} is still ${String(job.status)} after ${timeoutSeconds} s\n`)
        return EXIT.waitTimeout
      }
      return job.status === 'completed' ? EXIT.ok : EXIT.service
    }
    const pause = Math.min(MIN_POLL_MS - (Date.now() - started), deadline - Date.now())
    if (pause > 0) await sleep(pause)
  }
}

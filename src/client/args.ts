// The client's command line: `algoserve algorithms|call|jobs ...` read into a command and its options.
// Anything a person mistyped is a UsageError (exit 2) naming the problem; values the service judges (a
// status, a limit, an algorithm's params) are passed on for it to judge.
import { isLosslessNumber, parse } from 'lossless-json'

export const EXIT = {
  ok: 0,
  /** The service answered with an error (4xx/5xx), or a waited-for job failed. */
  service: 1,
  usage: 2,
  /** No answer: the service could not be reached, or the connection broke. */
  connection: 3,
  /** `jobs wait`: the timeout passed before the job ended. */
  waitTimeout: 4,
} as const

export class UsageError extends Error {}

export const DEFAULT_URL = 'http://127.0.0.1:8000'
/** `jobs wait` without --timeout: long enough for a heavy job, short enough not to hang a script. */
export const DEFAULT_WAIT_SECONDS = 300

/**
 * What `call` and `jobs create` ask for: PrimeChecker's number (the shorthand, `call 97`), or a named
 * algorithm and its params (numbers as LosslessNumber, so that every digit is sent).
 */
export type Work =
  | { algorithm: null; number: string }
  | { algorithm: string; version: string | null; params: Record<string, unknown> }

export type ClientCommand =
  | { name: 'algorithms'; algorithm: string | null; version: string | null }
  | { name: 'call'; work: Work }
  | { name: 'create'; work: Work; webhook: string | null; idempotencyKey: string | null }
  | { name: 'get'; id: string }
  | {
      name: 'list'
      status: string | null
      algorithm: string | null
      limit: string | null
      cursor: string | null
    }
  | { name: 'cancel'; id: string }
  | { name: 'wait'; id: string; timeoutSeconds: number; progress: ProgressMode }

/**
 * How `jobs wait` shows a running job's progress on stderr: 'auto' draws a bar when stderr is a
 * terminal and writes lines otherwise; --json shows none whatever is asked.
 */
export type ProgressMode = 'auto' | 'bar' | 'lines' | 'none'
const PROGRESS_MODES: readonly string[] = ['auto', 'bar', 'lines', 'none']

export interface ClientOptions {
  command: ClientCommand
  /** The service's base URL, without a trailing slash. */
  url: string
  /** --url as given, or null when the URL came from ALGOSERVE_URL or the default. */
  urlFlag: string | null
  apiKey: string | null
  json: boolean
}

/** What `--help` asks for: the client's usage instead of a command. */
export const HELP = Symbol('help')

const VALUE_FLAGS = new Set([
  'url',
  'api-key',
  'webhook',
  'idempotency-key',
  'status',
  'limit',
  'cursor',
  'timeout',
  'params',
  'algorithm',
  'progress',
])
const ALLOWED: Record<string, string[]> = {
  algorithms: ['url', 'api-key', 'json'],
  call: ['url', 'api-key', 'json', 'params'],
  create: ['url', 'api-key', 'json', 'params', 'webhook', 'idempotency-key'],
  get: ['url', 'api-key', 'json'],
  list: ['url', 'api-key', 'json', 'status', 'algorithm', 'limit', 'cursor'],
  cancel: ['url', 'api-key', 'json'],
  wait: ['url', 'api-key', 'json', 'timeout', 'progress'],
}

/** Splits arguments into positionals and `--flag value` / `--flag=value` / `--json` options. */
export function split(args: string[]): { positionals: string[]; flags: Map<string, string> } {
  const positionals: string[] = []
  const flags = new Map<string, string>()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    // A negative number is a positional, not a flag.
    if (!arg.startsWith('--') || /^-[0-9]/.test(arg)) {
      positionals.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
    if (name === 'json' || name === 'help') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`)
      flags.set(name, '')
      continue
    }
    if (!VALUE_FLAGS.has(name)) throw new UsageError(`unknown option --${name}`)
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1)
    if (value === undefined) throw new UsageError(`--${name} needs a value`)
    if (flags.has(name)) throw new UsageError(`--${name} is given twice`)
    flags.set(name, value)
  }
  return { positionals, flags }
}

/** An integer as the service reads it: optional sign, digits; leading zeros dropped, `+` dropped. */
export function integerLiteral(text: string): string {
  const match = /^([+-]?)([0-9]+)$/.exec(text)
  if (match === null) throw new UsageError(`'${shorten(text)}' is not an integer`)
  const digits = (match[2] as string).replace(/^0+(?=[0-9])/, '')
  return match[1] === '-' && digits !== '0' ? `-${digits}` : digits
}

const shorten = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text)

function positionals(command: string, given: string[], names: string[]): string[] {
  if (given.length < names.length) throw new UsageError(`${command}: missing <${names[given.length]}>`)
  if (given.length > names.length)
    throw new UsageError(`${command}: unexpected argument '${shorten(given[names.length] as string)}'`)
  return given
}

/** An algorithm's name as the service accepts it. */
const ALGORITHM_NAME = /^[A-Za-z0-9_-]+$/

function algorithmName(text: string): string {
  if (!ALGORITHM_NAME.test(text)) {
    throw new UsageError(`'${shorten(text)}' is not an algorithm name (letters, digits, '_' and '-')`)
  }
  return text
}

/**
 * `Name` or `Name@version`, the version exact (`1.2.0`) or a semver range (`1.2`, `^1`, `1.x`): passed
 * on as written, for the service to resolve.
 */
function algorithmAndVersion(text: string): { algorithm: string; version: string | null } {
  const at = text.indexOf('@')
  if (at === -1) return { algorithm: algorithmName(text), version: null }
  const version = text.slice(at + 1)
  if (!/^[^\s@]+$/.test(version)) {
    throw new UsageError(
      `'${shorten(text)}' is not Name@version (a version such as 1.2.0, or a range: 1.2, ^1, 1.x)`,
    )
  }
  return { algorithm: algorithmName(text.slice(0, at)), version }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value)

/** A JSON text read with every digit of its numbers kept (lossless-json's LosslessNumber). */
const exactJson = (text: string): unknown => parse(text)

/**
 * `key=value`: the value is JSON when it reads as JSON (a number with every digit, true, a quoted
 * string, an array or object), else the text as it is (`name=Ada`).
 */
function pair(arg: string): [string, unknown] {
  const eq = arg.indexOf('=')
  if (eq <= 0) throw new UsageError(`'${shorten(arg)}' is not a key=value pair`)
  const text = arg.slice(eq + 1)
  let value: unknown
  try {
    value = exactJson(text)
  } catch {
    value = text
  }
  return [arg.slice(0, eq), value]
}

/**
 * `<number>` (PrimeChecker, through POST /invoke or as its job), or `<algorithm> [key=value ...]` with
 * `--params '<json object>'` (the pairs set keys over it).
 */
function work(command: string, given: string[], paramsFlag: string | null): Work {
  const [first, ...pairs] = given
  if (first === undefined)
    throw new UsageError(`${command}: missing <algorithm> (or a number for PrimeChecker)`)
  if (pairs.length === 0 && paramsFlag === null && /^[+-]?[0-9.]+$/.test(first)) {
    return { algorithm: null, number: integerLiteral(first) }
  }
  return { ...algorithmAndVersion(first), params: paramsOf(paramsFlag, pairs) }
}

/** Params from `--params '<json object>'` (or none) and `key=value` pairs, which set keys over it. */
export function paramsOf(paramsFlag: string | null, pairs: readonly string[]): Record<string, unknown> {
  let params: Record<string, unknown> = {}
  if (paramsFlag !== null) {
    let parsed: unknown
    try {
      parsed = exactJson(paramsFlag)
    } catch (error) {
      throw new UsageError(`--params is not JSON: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (!isObject(parsed)) throw new UsageError('--params must be a JSON object, such as \'{"n": 27}\'')
    params = parsed
  }
  const set = new Set<string>()
  for (const arg of pairs) {
    const [key, value] = pair(arg)
    if (set.has(key)) throw new UsageError(`${key}= is given twice`)
    set.add(key)
    params[key] = value
  }
  return params
}

function baseUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(`'${raw}' is not a URL such as ${DEFAULT_URL}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`'${raw}' is not an http:// or https:// URL`)
  }
  return url.href.replace(/\/+$/, '')
}

/** A value sent as a header: fetch refuses other characters before anything is sent. */
function headerValue(flag: string, value: string | null): string | null {
  if (value !== null && !/^[\x20-\x7e]+$/.test(value)) {
    throw new UsageError(`--${flag} may hold printable ASCII characters only`)
  }
  return value
}

function seconds(raw: string): number {
  const value = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0) {
    throw new UsageError(`--timeout '${raw}' is not a number of seconds (0 or more)`)
  }
  return value
}

/**
 * Reads `algorithms ...`, `call ...` or `jobs ...` (argv without the program), with ALGOSERVE_URL and
 * ALGOSERVE_API_KEY.
 */
export function parseClientArgs(argv: string[], env: NodeJS.ProcessEnv): ClientOptions | typeof HELP {
  const [first, ...rest] = argv
  let name: string
  let args: string[]
  if (first === 'call' || first === 'algorithms') {
    name = first
    args = rest
  } else if (first === 'jobs') {
    const [sub, ...more] = rest
    if (sub === undefined || sub === '--help' || sub === '-h') return HELP
    if (!['create', 'get', 'list', 'cancel', 'wait'].includes(sub)) {
      throw new UsageError(`unknown jobs command '${shorten(sub)}' (create, get, list, cancel, wait)`)
    }
    name = sub
    args = more
  } else {
    throw new UsageError(`unknown command '${first}'`)
  }
  if (args.includes('-h')) return HELP
  const { positionals: given, flags } = split(args)
  if (flags.has('help')) return HELP
  for (const flag of flags.keys()) {
    if (!ALLOWED[name]?.includes(flag)) throw new UsageError(`${name} takes no --${flag}`)
  }
  const flag = (key: string) => flags.get(key) ?? null
  let command: ClientCommand
  switch (name) {
    case 'algorithms': {
      if (given.length > 1)
        throw new UsageError(`algorithms: unexpected argument '${shorten(given[1] as string)}'`)
      command =
        given[0] === undefined
          ? { name, algorithm: null, version: null }
          : { name, ...algorithmAndVersion(given[0]) }
      break
    }
    case 'call':
      command = { name, work: work(name, given, flag('params')) }
      break
    case 'create':
      command = {
        name,
        work: work(name, given, flag('params')),
        webhook: flag('webhook'),
        idempotencyKey: headerValue('idempotency-key', flag('idempotency-key')),
      }
      break
    case 'list':
      positionals(name, given, [])
      command = {
        name,
        status: flag('status'),
        algorithm: flag('algorithm'),
        limit: flag('limit'),
        cursor: flag('cursor'),
      }
      break
    case 'wait': {
      const [id] = positionals(name, given, ['id'])
      const timeout = flag('timeout')
      const progress = flag('progress') ?? 'auto'
      if (!PROGRESS_MODES.includes(progress))
        throw new UsageError(`--progress '${shorten(progress)}' is not one of ${PROGRESS_MODES.join(', ')}`)
      command = {
        name,
        id: id as string,
        timeoutSeconds: timeout === null ? DEFAULT_WAIT_SECONDS : seconds(timeout),
        progress: progress as ProgressMode,
      }
      break
    }
    default: {
      const [id] = positionals(name, given, ['id'])
      command = { name: name as 'get' | 'cancel', id: id as string }
    }
  }
  const apiKey = headerValue('api-key', flag('api-key') ?? (env.ALGOSERVE_API_KEY || null))
  return {
    command,
    url: baseUrl(flag('url') ?? (env.ALGOSERVE_URL || DEFAULT_URL)),
    urlFlag: flag('url'),
    apiKey,
    json: flags.has('json'),
  }
}

/** What follows a usage error's one line. */
export const USAGE_HINT = "Run 'algoserve --help' for the commands and their options."

export const CLIENT_USAGE = `Client commands (talk to a running service):
  algoserve algorithms [<algorithm>]          GET /algorithms: the algorithms served and their versions;
                                              with a name, its params and result schemas and examples
                                              (Name@1.2: that version's)
  algoserve call <algorithm> [--params JSON] [key=value ...]
                                              POST /algorithms/{name}/invoke: one run, answered now, by
                                              its default version (Name@1.2: that version, or a range's
                                              highest match: Name@^1, Name@1.x)
  algoserve call <number>                     POST /invoke: is it prime, and its factors (PrimeChecker)
  algoserve jobs create <algorithm> [--params JSON] [key=value ...] [--webhook URL]
                    [--idempotency-key K]     POST /jobs: a job of that algorithm (Name@^1: pinned to
                                              a version, or a range's highest match)
  algoserve jobs create <number> [...]        POST /jobs: a PrimeChecker job
  algoserve jobs get <id>                     GET /jobs/{id}
  algoserve jobs list [--status S] [--algorithm A] [--limit N] [--cursor C]
                                              GET /jobs, newest first; S: pending, running,
                                              completed or failed; A: jobs of that algorithm
  algoserve jobs cancel <id>                  POST /jobs/{id}/cancel
  algoserve jobs wait <id> [--timeout S] [--progress P]
                                              GET /jobs/{id}/events until the job ends or S seconds
                                              pass (default ${DEFAULT_WAIT_SECONDS}), its progress on
                                              stderr; P: auto (a bar on a terminal, else lines), bar,
                                              lines or none

  --url URL        the service (ALGOSERVE_URL; default ${DEFAULT_URL})
  --api-key KEY    sent as Authorization: Bearer KEY (ALGOSERVE_API_KEY)
  --json           print the service's JSON body exactly as it was sent (on errors too)
  --params JSON    an algorithm's params as one JSON object; key=value pairs set keys over it. A
                   value is JSON when it reads as JSON (n=27, ok=true, tags='["a"]', s='"42"'), else
                   the text as it is (name=Ada)

  Integers of any size are sent and shown with every digit.

Exit codes:
  0  success
  1  the service answered with an error (4xx/5xx), or the job waited for failed
  2  usage error (bad command, option, number or params)
  3  connection failure (the service could not be reached)
  4  jobs wait: the timeout passed before the job ended
`

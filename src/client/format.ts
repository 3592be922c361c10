// What a person reads: the service's bodies (parsed by lossless-json, so numbers are LosslessNumber and
// print with every digit) as short aligned lines. --json bypasses all of this.
import { isLosslessNumber, stringify } from 'lossless-json'
import type { Answer } from './http.js'

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value)

/** The algorithm whose results get sentences instead of members. */
const PRIME_CHECKER = 'PrimeChecker'

/** A JSON value as text: numbers with every digit, strings as they are, null as a dash. */
const text = (value: unknown): string => (value === null || value === undefined ? '-' : String(value))

/** Seconds (a float the service measured) for a person: "11.3 ms", "2.41 s". */
function seconds(value: unknown): string {
  const s = Number(String(value))
  if (!Number.isFinite(s)) return text(value)
  return s < 1 ? `${Number((s * 1000).toPrecision(3))} ms` : `${s.toFixed(2)} s`
}

const lines = (rows: [string, string][]): string => {
  const width = Math.max(...rows.map(([label]) => label.length))
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n')
}

/** The version that answered (a call) or that a job is pinned to, read from the response's headers. */
export interface ServedVersion {
  version: string
  deprecated: boolean
  /** The Sunset header, when it came. */
  sunset: string | null
}

/** A row saying the version is deprecated, when it is. */
const deprecationRows = (served: ServedVersion | null): [string, string][] =>
  served?.deprecated === true
    ? [['deprecated', served.sunset === null ? 'yes' : `yes; served until ${served.sunset}`]]
    : []

/** PrimeChecker's result in words: "97 is prime", "91 is not prime: 7 × 13". */
export function describePrime(result: unknown): [string, string][] {
  if (!isObject(result)) return [['result', text(result)]]
  const rows: [string, string][] = []
  const prime = result.is_prime === true
  rows.push(['number', `${text(result.number)} ${prime ? 'is prime' : 'is not prime'}`])
  const factors = Array.isArray(result.factors) ? result.factors.map(text) : []
  if (!prime && factors.length > 0) {
    const incomplete = result.factorization_complete === false
    rows.push([
      'factors',
      `${factors.join(' × ')}${incomplete ? '  (incomplete: the factorisation budget ran out)' : ''}`,
    ])
  }
  if (result.algorithm !== undefined) rows.push(['method', text(result.algorithm)])
  return rows
}

/** A value on one line: scalars as they are, a list of scalars comma-separated, anything else as JSON. */
function inline(value: unknown): string {
  if (value === null || value === undefined || typeof value !== 'object' || isLosslessNumber(value))
    return text(value)
  if (Array.isArray(value) && value.every((item) => typeof item !== 'object' || isLosslessNumber(item)))
    return value.length === 0 ? '(none)' : value.map(text).join(', ')
  return stringify(value) as string
}

/** Any algorithm's result: a row per member (`result.steps  111`), PrimeChecker's in words. */
export function describeResult(algorithm: unknown, result: unknown): [string, string][] {
  if (algorithm === PRIME_CHECKER) return describePrime(result)
  if (!isObject(result)) return [['result', inline(result)]]
  const rows = Object.entries(result).map(([key, value]): [string, string] => [
    `result.${key}`,
    inline(value),
  ])
  return rows.length === 0 ? [['result', '{}']] : rows
}

export function formatInvoke(body: unknown, served: ServedVersion | null = null): string {
  if (!isObject(body)) return String(body)
  const metadata = isObject(body.metadata) ? body.metadata : {}
  const rows: [string, string][] = []
  const algorithm = metadata.algorithm ?? PRIME_CHECKER
  if (algorithm !== PRIME_CHECKER) rows.push(['algorithm', `${text(algorithm)} ${text(metadata.version)}`])
  rows.push(...deprecationRows(served))
  rows.push(...describeResult(algorithm, body.result))
  if (metadata.elapsed_time !== undefined) rows.push(['elapsed', seconds(metadata.elapsed_time)])
  rows.push(['request id', text(body.request_id)])
  return lines(rows)
}

export function formatJob(job: unknown, served: ServedVersion | null = null): string {
  if (!isObject(job)) return String(job)
  const version = served?.version ?? (isObject(job.metadata) ? job.metadata.version : undefined)
  const rows: [string, string][] = [
    ['job', text(job.job_id)],
    ['status', text(job.status)],
    ['algorithm', text(job.algorithm)],
    ...(version === undefined ? [] : [['version', text(version)] as [string, string]]),
    ...deprecationRows(served),
    ['created', text(job.created_at)],
    ['started', text(job.started_at)],
    ['ended', text(job.completed_at)],
  ]
  // Present when asked for (GET /jobs/{job_id}?include=params), as `jobs get` does.
  if (isObject(job.params)) {
    const params = Object.entries(job.params)
    if (params.length === 0) rows.push(['params', '{}'])
    for (const [key, value] of params) rows.push([`params.${key}`, inline(value)])
  }
  if (job.result !== null && job.result !== undefined) rows.push(...describeResult(job.algorithm, job.result))
  if (job.error !== null && job.error !== undefined) rows.push(['error', text(job.error)])
  if (isObject(job.metadata)) {
    const { elapsed_time, worker, attempt } = job.metadata
    if (elapsed_time !== undefined) rows.push(['elapsed', seconds(elapsed_time)])
    if (worker !== undefined) rows.push(['worker', text(worker)])
    if (attempt !== undefined) rows.push(['attempt', text(attempt)])
  }
  return lines(rows)
}

export function formatCreated(body: unknown, replayed: boolean, served: ServedVersion | null = null): string {
  if (!isObject(body)) return String(body)
  const rows: [string, string][] = [
    ['job', text(body.job_id)],
    ['status', text(body.status)],
    ['created', text(body.created_at)],
  ]
  if (served !== null) rows.push(['version', served.version], ...deprecationRows(served))
  if (replayed) rows.push(['replayed', 'yes: the Idempotency-Key was used before; this is that job'])
  return lines(rows)
}

/** A number in a table cell: long ones cut, with their length (the job's own page shows them whole). */
function cell(value: unknown): string {
  const digits = text(value)
  return digits.length > 24 ? `${digits.slice(0, 12)}…(${digits.replace('-', '').length} digits)` : digits
}

/** A result in a table cell: PrimeChecker's number; any other result's members on one line, cut. */
function resultCell(job: Json): string {
  if (job.result === null || job.result === undefined) return '-'
  if (job.algorithm === PRIME_CHECKER) return isObject(job.result) ? cell(job.result.number) : '-'
  const line = isObject(job.result)
    ? Object.entries(job.result)
        .map(([key, value]) => `${key}: ${inline(value)}`)
        .join(', ')
    : inline(job.result)
  return line.length > 40 ? `${line.slice(0, 39)}…` : line
}

/** Rows of cells in aligned columns; the last column is not padded. */
function table(rows: string[][]): string[] {
  const last = (rows[0]?.length ?? 1) - 1
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? []
  return rows.map((row) =>
    row.map((value, i) => (i < last ? value.padEnd(widths[i] ?? 0) : value)).join('  '),
  )
}

/** GET /algorithms: a line per algorithm. */
export function formatAlgorithms(body: unknown): string {
  if (!isObject(body) || !Array.isArray(body.algorithms)) return String(body)
  const algorithms = body.algorithms.filter(isObject)
  if (algorithms.length === 0) return 'No algorithms.'
  // A column of versions only when one says more than VERSION does: the table stays as it was otherwise.
  const versions = algorithms.map((a) => (Array.isArray(a.versions) ? a.versions.filter(isObject) : []))
  const shown = versions.some((list) => list.length > 1 || list.some((one) => one.deprecated === true))
  return table([
    ['NAME', 'VERSION', 'WORKERS', ...(shown ? ['VERSIONS'] : []), 'DESCRIPTION'],
    ...algorithms.map((a, i) => [
      text(a.name),
      text(a.version),
      a.workers == null ? '?' : text(a.workers),
      ...(shown ? [(versions[i] ?? []).map(versionNote).join(', ')] : []),
      text(a.description),
    ]),
  ]).join('\n')
}

/** `1.2.0`, `1.2.0 (default 90%)`, `1.0.0 (deprecated until 2027-06-30)`: a version and what marks it. */
function versionNote(version: Json, _i: number, all: Json[]): string {
  const marks: string[] = []
  const defaults = all.filter((one) => one.default === true)
  // Numbers come as LosslessNumber.
  const weight = (one: Json) => Number(String(one.weight ?? 0))
  const total = defaults.reduce((sum, one) => sum + weight(one), 0)
  // A name with one version: that it is the default says nothing.
  if (version.default === true && all.length > 1)
    marks.push(defaults.length > 1 ? `default ${Math.round((100 * weight(version)) / total)}%` : 'default')
  if (version.deprecated === true)
    marks.push(version.sunset == null ? 'deprecated' : `deprecated until ${text(version.sunset)}`)
  return marks.length === 0 ? text(version.version) : `${text(version.version)} (${marks.join(', ')})`
}

/** GET /algorithms/{name}: what it is, its schemas, and its examples as commands to run. */
export function formatAlgorithm(body: unknown): string {
  if (!isObject(body)) return String(body)
  const limit = body.timeout_ms
  const rows: [string, string][] = [
    ['name', text(body.name)],
    ['version', text(body.version)],
    ['description', text(body.description)],
    ...(body.deprecated === true
      ? [
          ['deprecated', body.sunset == null ? 'yes' : `yes; served until ${text(body.sunset)}`] as [
            string,
            string,
          ],
        ]
      : []),
    ['time limit', limit === null || limit === undefined ? "the service's default" : `${text(limit)} ms`],
  ]
  const bounds = body.limits
  if (isObject(bounds))
    rows.push([
      'request bounds',
      `${text(bounds.max_body_bytes)} bytes, ${text(bounds.max_json_values)} JSON values, depth ` +
        `${text(bounds.max_json_depth)}, ${text(bounds.max_string_length)} characters a string, ` +
        `${text(bounds.max_digits)} digits an integer`,
    ])
  const out = [lines(rows)]
  const versions = Array.isArray(body.versions) ? body.versions.filter(isObject) : []
  if (versions.length > 1 || versions.some((one) => one.deprecated === true)) {
    out.push('', `Versions (algoserve algorithms ${text(body.name)}@<version> shows one):`)
    out.push(...versions.map((one, i, all) => `  ${versionNote(one, i, all)}`))
  }
  out.push('', 'Params (JSON Schema):', stringify(body.params, null, 2) as string)
  out.push('', 'Result (JSON Schema):', stringify(body.result, null, 2) as string)
  const examples = Array.isArray(body.examples) ? body.examples.filter(isObject) : []
  if (examples.length > 0) {
    out.push('', 'Examples:')
    for (const example of examples) {
      const params = stringify(example.params ?? {}) as string
      // A version's own page (it says whether it is a default) calls that version.
      const target = body.default === undefined ? text(body.name) : `${text(body.name)}@${text(body.version)}`
      out.push(`  algoserve call ${shellWord(target)} --params ${shellWord(params)}`)
    }
  }
  return out.join('\n')
}

/** A word for a POSIX shell: as it is when it is safe, else in single quotes. */
const shellWord = (word: string): string =>
  /^[A-Za-z0-9_.,:/@%+=-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`

/**
 * The command for the next page: the same filter, limit and --url (when one was given; a key is never
 * printed), and the cursor the service gave.
 */
function nextPage(list: ListOptions, urlFlag: string | null, cursor: string): string {
  const words = ['algoserve', 'jobs', 'list']
  if (list.status !== null) words.push('--status', list.status)
  if (list.algorithm) words.push('--algorithm', list.algorithm)
  if (list.limit !== null) words.push('--limit', list.limit)
  if (urlFlag !== null) words.push('--url', urlFlag)
  words.push('--cursor', cursor)
  return words.map((word, i) => (i < 3 ? word : shellWord(word))).join(' ')
}

interface ListOptions {
  status: string | null
  /** Absent where no algorithm filter can be given. */
  algorithm?: string | null
  limit: string | null
}

export function formatList(body: unknown, list: ListOptions, urlFlag: string | null = null): string {
  const { status, algorithm } = list
  if (!isObject(body) || !Array.isArray(body.jobs)) return String(body)
  const jobs = body.jobs.filter(isObject)
  const out: string[] = []
  const of = algorithm ? ` of ${algorithm}` : ''
  if (jobs.length === 0) out.push(status === null ? `No jobs${of}.` : `No ${status} jobs${of}.`)
  else {
    const rows = [
      ['ID', 'STATUS', 'ALGORITHM', 'CREATED', 'RESULT'],
      ...jobs.map((job) => [
        text(job.job_id),
        text(job.status),
        text(job.algorithm),
        text(job.created_at),
        resultCell(job),
      ]),
    ]
    out.push(...table(rows))
  }
  if (typeof body.next_cursor === 'string') out.push('', `More: ${nextPage(list, urlFlag, body.next_cursor)}`)
  return out.join('\n')
}

/** An error answer in one line: status, code and message, or the 422's problems. */
export function formatError(answer: Answer): string {
  const { status, body } = answer
  // /invoke's errors are flat; /jobs' sit under `detail`; 422 has a list of problems under `detail`.
  const detail = isObject(body) ? body.detail : undefined
  const error = isObject(detail) ? detail : isObject(body) && 'error' in body ? body : null
  let message: string
  if (error !== null) {
    message = `${text(error.error)}: ${text(error.message)}`
    // A 400 names the params member at fault (the service's own rules, or the algorithm's refusal).
    const field = isObject(error.details) ? error.details.field : undefined
    if (typeof field === 'string') message += ` (field ${field})`
  } else if (Array.isArray(detail)) {
    message = detail
      .filter(isObject)
      .map((problem) => {
        const loc = Array.isArray(problem.loc) ? problem.loc.map(text).join('.') : ''
        return `${loc}: ${text(problem.msg)}`
      })
      .join('; ')
  } else if (typeof detail === 'string') message = detail
  else message = answer.text.slice(0, 200) || '(empty body)'
  const retry = answer.headers.get('retry-after')
  return `${status} ${message}${retry === null ? '' : ` (retry after ${retry} s)`}`
}

/** A job's progress as the service tells it: a fraction 0..1 and what the run is doing. */
export interface Progress {
  progress: number
  message: string | null
}

const BAR_WIDTH = 20

/** Whole percents, rounded down: a run shows 100% only once it has said it has done everything. */
const percent = (fraction: number) => Math.floor(Math.min(1, Math.max(0, fraction)) * 100)

/**
 * One line for a terminal: `[##########··········]  42%  sieve: 812 of 1,930 relations`, or the state
 * alone (`pending`, `running`) before any progress is told.
 */
export function progressBar(status: string, progress: Progress | null): string {
  if (progress === null) return status
  const filled = Math.round((percent(progress.progress) / 100) * BAR_WIDTH)
  const bar = `[${'#'.repeat(filled)}${'·'.repeat(BAR_WIDTH - filled)}]`
  const message = progress.message === null ? '' : `  ${progress.message}`
  return `${bar} ${String(percent(progress.progress)).padStart(3)}%${message}`
}

/** One line for a log: `running 42% sieve: 812 of 1,930 relations`, or the state alone. */
export function progressLine(status: string, progress: Progress | null): string {
  if (progress === null) return status
  const message = progress.message === null ? '' : ` ${progress.message}`
  return `${status} ${percent(progress.progress)}%${message}`
}

// Settings: each one an ALGOSERVE_* environment variable and a matching flag (the flag wins), read once
// and validated at start. A bad value stops the process with a message naming the setting.
import { readFileSync } from 'node:fs'
import semver from 'semver'
import { type DefaultShare, versionKey } from './algorithms/registry.js'
import type { DeprecatedVersions } from './algorithms/version-policy.js'
import { ConfigError } from './errors.js'
import { DEFAULT_RECEIVER_MAX_IN_FLIGHT } from './webhooks/receiver-pace.js'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** A setting: its key in Config, its variable, its default and how a raw value becomes one. */
interface Setting<K extends string, T> {
  key: K
  env: string
  default: NoInfer<T>
  description: string
  parse: (raw: string) => T
  /** Its value never appears in a message (a bad one is described, not repeated). */
  secret?: boolean
}

const integer =
  (min: number, max: number) =>
  (raw: string): number => {
    if (!/^[0-9]+$/.test(raw.trim())) throw new Error(`must be a whole number from ${min} to ${max}`)
    const value = Number(raw.trim())
    if (value < min || value > max) throw new Error(`must be from ${min} to ${max}`)
    return value
  }

const nonEmpty = (raw: string): string => {
  if (raw.trim() === '') throw new Error('must not be empty')
  return raw.trim()
}

const oneOf =
  <T extends string>(values: readonly T[]) =>
  (raw: string): T => {
    const value = raw.trim().toLowerCase() as T
    if (!values.includes(value)) throw new Error(`must be one of ${values.join(', ')}`)
    return value
  }

const TRUE_WORDS = ['true', '1', 'yes']
const FALSE_WORDS = ['false', '0', 'no']

const boolean = (raw: string): boolean => {
  const value = raw.trim().toLowerCase()
  if (TRUE_WORDS.includes(value)) return true
  if (FALSE_WORDS.includes(value) || value === '') return false
  throw new Error('must be true or false')
}

/** A Standard Webhooks secret: `whsec_` then the base64 of 24 to 64 random bytes; empty for none. */
const webhookSecret = (raw: string): string | null => {
  const value = raw.trim()
  if (value === '') return null
  const key = value.startsWith('whsec_') ? value.slice('whsec_'.length) : undefined
  if (key === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(key)) {
    throw new Error('must be whsec_ followed by base64, as Standard Webhooks secrets are')
  }
  const bytes = Buffer.from(key, 'base64').length
  if (bytes < 24 || bytes > 64) throw new Error(`must hold 24 to 64 bytes of key (it holds ${bytes})`)
  return value
}

/** A Redis URL as ioredis takes it: redis:// or rediss:// (TLS) with a host; empty for none. */
const redisUrl = (raw: string): string | null => {
  const value = raw.trim()
  if (value === '') return null
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new Error('must be a URL such as redis://127.0.0.1:6379')
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new Error('must start with redis:// or rediss://')
  if (url.hostname === '') throw new Error('must name a host')
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/[0-9]+$/.test(url.pathname)) {
    throw new Error('may end only in a database number, as in redis://host:6379/0')
  }
  return value
}

/** `host:port` entries, comma-separated. */
const hostPorts = (raw: string): string[] =>
  list(raw).map((item) => {
    const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(item)
    if (match === null || Number(match[2]) < 1 || Number(match[2]) > 65535) {
      throw new Error(`'${item}' is not host:port`)
    }
    return item
  })

const optionalName = (raw: string): string | null => (raw.trim() === '' ? null : raw.trim())

/** One line of at most `max` characters; empty for none. */
const optionalLine =
  (max: number) =>
  (raw: string): string | null => {
    const value = optionalName(raw)
    if (value !== null && /[\r\n]/.test(value)) throw new Error('must be one line')
    if (value !== null && value.length > max) throw new Error(`must be at most ${max} characters`)
    return value
  }

/** Text of at most `max` characters, lines kept; empty for none. */
const optionalText =
  (max: number) =>
  (raw: string): string | null => {
    const value = optionalName(raw)
    if (value !== null && value.length > max) throw new Error(`must be at most ${max} characters`)
    return value
  }

/** A setting naming a file: its path and text, or null when empty; an unreadable file is an error. */
const settingFile = (raw: string): { path: string; text: string } | null => {
  const path = raw.trim()
  if (path === '') return null
  try {
    return { path, text: readFileSync(path, 'utf8') }
  } catch (error) {
    throw new Error(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

/** A readable PEM file holding at least one certificate; empty for none. */
const caFile = (raw: string): string | null => {
  const file = settingFile(raw)
  if (file === null) return null
  if (!file.text.includes('-----BEGIN CERTIFICATE-----')) throw new Error('holds no PEM certificate')
  return file.path
}

const keyPrefix = (raw: string): string => {
  const value = raw.trim()
  if (!/^[A-Za-z0-9_.{}-]{1,64}$/.test(value)) {
    throw new Error('must be 1 to 64 letters, digits, or _ . - { } (no colon)')
  }
  return value
}

const list = (raw: string): string[] =>
  raw
    .split(/[,\s]+/)
    .map((item) => item.trim())
    .filter((item) => item !== '')

const KEY_HASH = /^(?:sha256:)?([0-9a-fA-F]{64})$/

/** API key hashes: `sha256:<64 hex>` or the bare 64 hex digits of SHA-256 of a key. */
export const keyHashes = (raw: string): string[] =>
  list(raw.replace(/#[^\n]*/g, '')).map((item, i) => {
    const hash = KEY_HASH.exec(item)?.[1]
    if (hash === undefined) {
      throw new Error(
        `entry ${i + 1} is not a SHA-256 hash (sha256: and 64 hex digits; printf %s "$KEY" | sha256sum)`,
      )
    }
    return hash.toLowerCase()
  })

const keyFile = (raw: string): string | null => {
  const file = settingFile(raw)
  if (file === null) return null
  if (keyHashes(file.text).length === 0) throw new Error('holds no key hash')
  return file.path
}

const origins = (raw: string): string[] =>
  list(raw).map((origin) => {
    if (origin === '*') return origin
    let url: URL
    try {
      url = new URL(origin)
    } catch {
      throw new Error(`'${origin}' is not an origin such as https://app.example.com`)
    }
    if (url.origin !== origin.replace(/\/$/, '')) {
      throw new Error(`'${origin}' is not an origin (scheme, host and port only)`)
    }
    return url.origin
  })

const ALGORITHM_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** `Name@version` then, after a colon, what `tail` reads (or nothing): each entry of a version list. */
const versionEntries = <T>(raw: string, tail: (text: string, entry: string) => T) =>
  list(raw).map((entry) => {
    const match = /^([^@:]+)@([^:]+)(?::(.*))?$/.exec(entry)
    const [, name, version, rest] = match ?? []
    if (name === undefined || version === undefined || !ALGORITHM_NAME.test(name)) {
      throw new Error(`'${entry}' is not Name@version`)
    }
    if (semver.valid(version) !== version)
      throw new Error(`'${entry}': ${version} is not an exact semver version`)
    return { name, version, tail: rest === undefined ? undefined : tail(rest, entry) }
  })

/** `Name@version` or `Name@version:weight`, comma-separated: each name's default, split by weight. */
const defaultVersions = (raw: string): ReadonlyMap<string, readonly DefaultShare[]> => {
  const defaults = new Map<string, DefaultShare[]>()
  const unweighted = new Set<string>()
  for (const { name, version, tail } of versionEntries(raw, (text, entry) => {
    if (!/^[0-9]{1,6}$/.test(text) || Number(text) === 0) {
      throw new Error(`'${entry}': the weight must be a whole number from 1 to 999999`)
    }
    return Number(text)
  })) {
    const shares = defaults.get(name) ?? []
    if (shares.some((share) => share.version === version))
      throw new Error(`${name}@${version} is named twice`)
    if (tail === undefined) unweighted.add(name)
    shares.push({ version, weight: tail ?? 1 })
    defaults.set(name, shares)
  }
  for (const name of unweighted) {
    if ((defaults.get(name)?.length ?? 0) > 1) {
      throw new Error(
        `${name}'s default is split between versions: give each its weight (${name}@version:weight)`,
      )
    }
  }
  return defaults
}

/** `Name@version` or `Name@version:YYYY-MM-DD` (its sunset day), comma-separated. */
const deprecatedVersions = (raw: string): DeprecatedVersions => {
  const deprecated = new Map<string, { sunset: string | null }>()
  for (const { name, version, tail } of versionEntries(raw, (text, entry) => {
    const day = new Date(`${text}T00:00:00Z`)
    if (
      !/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(text) ||
      Number.isNaN(day.getTime()) ||
      day.toISOString().slice(0, 10) !== text
    ) {
      throw new Error(`'${entry}': the sunset must be a day, YYYY-MM-DD`)
    }
    return text
  })) {
    const key = versionKey(name, version)
    if (deprecated.has(key)) throw new Error(`${key} is named twice`)
    deprecated.set(key, { sunset: tail ?? null })
  }
  return deprecated
}

function setting<const K extends string, T>(s: Setting<K, T>): Setting<K, T> {
  return s
}

export const SETTINGS = [
  setting({
    key: 'host',
    env: 'ALGOSERVE_HOST',
    default: '127.0.0.1',
    parse: nonEmpty,
    description: 'Address to listen on.',
  }),
  setting({
    key: 'port',
    env: 'ALGOSERVE_PORT',
    default: 8000,
    parse: integer(0, 65535),
    description: 'Port to listen on (0 picks a free one).',
  }),
  setting({
    key: 'dataDir',
    env: 'ALGOSERVE_DATA_DIR',
    default: './data',
    parse: nonEmpty,
    description: 'Directory of the embedded job store.',
  }),
  setting({
    key: 'maxDigits',
    env: 'ALGOSERVE_MAX_DIGITS',
    default: 4300,
    parse: integer(1, 1_000_000),
    description: 'Most decimal digits a number may have; longer is 400 VALIDATION_ERROR.',
  }),
  setting({
    key: 'maxBodyBytes',
    env: 'ALGOSERVE_MAX_BODY_BYTES',
    default: 1_048_576,
    parse: integer(64, 1_073_741_824),
    description: 'Largest request body in bytes; larger is 413 PAYLOAD_TOO_LARGE.',
  }),
  setting({
    key: 'invokeFactorBudgetMs',
    env: 'ALGOSERVE_INVOKE_FACTOR_BUDGET_MS',
    default: 2000,
    parse: integer(0, 3_600_000),
    description: 'Factorisation time budget of POST /invoke, in ms; then factorization_complete is false.',
  }),
  setting({
    key: 'workerThreads',
    env: 'ALGOSERVE_WORKER_THREADS',
    default: 0,
    parse: integer(0, 1024),
    description:
      'Worker threads for algorithm work; 0 means one per usable CPU but one, at least one (the CPU quota of the cgroup, else the CPU affinity, else the cores).',
  }),
  setting({
    key: 'httpProcesses',
    env: 'ALGOSERVE_HTTP_PROCESSES',
    default: 1,
    parse: integer(1, 256),
    description:
      '`algoserve serve`: HTTP processes sharing the port, the worker threads and the programs of process algorithms divided among them; with the embedded store the primary keeps it and runs the jobs. `algoserve worker` refuses more than 1.',
  }),
  setting({
    key: 'shutdownGraceMs',
    env: 'ALGOSERVE_SHUTDOWN_GRACE_MS',
    default: 30_000,
    parse: integer(0, 3_600_000),
    description: 'On SIGTERM/SIGINT, how long work in flight may take to finish, in ms.',
  }),
  setting({
    key: 'logLevel',
    env: 'ALGOSERVE_LOG_LEVEL',
    default: 'info',
    parse: oneOf(LOG_LEVELS),
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
  }),
  setting({
    key: 'jobFactorBudgetMs',
    env: 'ALGOSERVE_JOB_FACTOR_BUDGET_MS',
    default: 60_000,
    parse: integer(0, 86_400_000),
    description: 'Factorisation time budget of a job, in ms; then factorization_complete is false.',
  }),
  setting({
    key: 'jobTimeoutMs',
    env: 'ALGOSERVE_JOB_TIMEOUT_MS',
    default: 300_000,
    parse: integer(1, 86_400_000),
    description: 'Hard time limit of one job run, in ms; a job that exceeds it fails saying so.',
  }),
  setting({
    key: 'jobConcurrency',
    env: 'ALGOSERVE_JOB_CONCURRENCY',
    default: 0,
    parse: integer(0, 1024),
    description:
      'Jobs run at once by this process; 0 means twice the worker threads, at least 32 (see docs/jobs.md for the trade).',
  }),
  setting({
    key: 'jobTtlSeconds',
    env: 'ALGOSERVE_JOB_TTL_SECONDS',
    default: 86_400,
    parse: integer(1, 31_622_400),
    description: 'How long a finished job stays readable after completed_at, in s; then 404 JOB_NOT_FOUND.',
  }),
  setting({
    key: 'maxPendingJobs',
    env: 'ALGOSERVE_MAX_PENDING_JOBS',
    default: 10_000,
    parse: integer(1, 100_000_000),
    description: 'Most jobs waiting at once; beyond it POST /jobs answers 503 with Retry-After.',
  }),
  setting({
    key: 'maxJobWaiters',
    env: 'ALGOSERVE_MAX_JOB_WAITERS',
    default: 1000,
    parse: integer(0, 1_000_000),
    description:
      'Most GET /jobs/{job_id}?wait= requests held at once; beyond it a wait answers at once (Wait-Skipped: true).',
  }),
  setting({
    key: 'maxEventStreams',
    env: 'ALGOSERVE_MAX_EVENT_STREAMS',
    default: 10_000,
    parse: integer(0, 1_000_000),
    description: 'Most GET /jobs/{job_id}/events streams open at once; beyond it a new one answers 503.',
  }),
  setting({
    key: 'webhookSecret',
    env: 'ALGOSERVE_WEBHOOK_SECRET',
    default: null,
    parse: webhookSecret,
    secret: true,
    description: 'Standard Webhooks signing secret (whsec_ + base64); empty sends no webhook-signature.',
  }),
  setting({
    key: 'webhookAllowPrivate',
    env: 'ALGOSERVE_WEBHOOK_ALLOW_PRIVATE',
    default: false,
    parse: boolean,
    description: 'Allow webhook targets on loopback, private and other non-public addresses.',
  }),
  setting({
    key: 'webhookReceiverMaxInFlight',
    env: 'ALGOSERVE_WEBHOOK_RECEIVER_MAX_IN_FLIGHT',
    default: DEFAULT_RECEIVER_MAX_IN_FLIGHT,
    parse: integer(1, 256),
    description:
      'Most webhook attempts in flight to one receiver from one process; a receiver that keeps up gets up to this many, one that fails fewer.',
  }),
  setting({
    key: 'redisUrl',
    env: 'ALGOSERVE_REDIS_URL',
    default: null,
    parse: redisUrl,
    // It may hold a password.
    secret: true,
    description:
      'Distributed mode: jobs and webhooks in this Redis (redis:// or rediss://), shared by every process; empty for the embedded store.',
  }),
  setting({
    key: 'redisPrefix',
    env: 'ALGOSERVE_REDIS_PREFIX',
    default: 'algoserve',
    parse: keyPrefix,
    description: 'Prefix of every Redis key; processes with the same URL and prefix share their jobs.',
  }),
  setting({
    key: 'redisClusterNodes',
    env: 'ALGOSERVE_REDIS_CLUSTER_NODES',
    default: [],
    parse: hostPorts,
    description:
      'Redis Cluster: nodes to start from (host:port, comma-separated), the URL among them; the prefix must be hash-tagged ({name}).',
  }),
  setting({
    key: 'redisSentinels',
    env: 'ALGOSERVE_REDIS_SENTINELS',
    default: [],
    parse: hostPorts,
    description:
      'Sentinel: the sentinels (host:port, comma-separated), the URL among them; needs ALGOSERVE_REDIS_SENTINEL_NAME.',
  }),
  setting({
    key: 'redisSentinelName',
    env: 'ALGOSERVE_REDIS_SENTINEL_NAME',
    default: null,
    parse: optionalName,
    description: 'Sentinel: the name of the primary the sentinels watch.',
  }),
  setting({
    key: 'redisTlsCaFile',
    env: 'ALGOSERVE_REDIS_TLS_CA_FILE',
    default: null,
    parse: caFile,
    description:
      "PEM file of the CA that signed Redis's certificate (a rediss:// URL only); else the system's CAs.",
  }),
  setting({
    key: 'redisMinReplicas',
    env: 'ALGOSERVE_REDIS_MIN_REPLICAS',
    default: 0,
    parse: integer(0, 16),
    description:
      "Replicas that must acknowledge a new job (Redis's WAIT) before POST /jobs answers 202; else 503. 0 waits for none.",
  }),
  setting({
    key: 'workerPort',
    env: 'ALGOSERVE_WORKER_PORT',
    default: 8001,
    parse: integer(0, 65535),
    description: '`algoserve worker`: port of its /healthz, /readyz and /metrics (0 picks a free one).',
  }),
  setting({
    key: 'runJobs',
    env: 'ALGOSERVE_RUN_JOBS',
    default: false,
    parse: boolean,
    description: 'With a Redis URL, `algoserve serve` runs jobs and webhooks too (else only workers do).',
  }),
  setting({
    key: 'jobLockMs',
    env: 'ALGOSERVE_JOB_LOCK_MS',
    default: 30_000,
    parse: integer(1000, 3_600_000),
    description:
      "With a Redis URL: a running job's lock, in ms; a dead worker's job runs again within about twice this. Same on every process.",
  }),
  setting({
    key: 'apiKeys',
    env: 'ALGOSERVE_API_KEYS',
    default: [],
    parse: keyHashes,
    secret: true,
    description:
      'SHA-256 hashes of accepted API keys (sha256:<hex>, comma-separated); when set, the API needs Authorization: Bearer <key>.',
  }),
  setting({
    key: 'apiKeysFile',
    env: 'ALGOSERVE_API_KEYS_FILE',
    default: null,
    parse: keyFile,
    description: 'A file of API key hashes, one a line (# comments); adds to ALGOSERVE_API_KEYS.',
  }),
  setting({
    key: 'apiKeysForMetrics',
    env: 'ALGOSERVE_API_KEYS_METRICS',
    default: false,
    parse: boolean,
    description: 'With API keys set, /metrics needs a key too.',
  }),
  setting({
    key: 'apiKeysForDocs',
    env: 'ALGOSERVE_API_KEYS_DOCS',
    default: false,
    parse: boolean,
    description: 'With API keys set, /docs, /redoc and /openapi.json need a key too.',
  }),
  setting({
    key: 'corsOrigins',
    env: 'ALGOSERVE_CORS_ORIGINS',
    default: [],
    parse: origins,
    description:
      'Origins allowed to call the API from a browser (comma-separated, or *); none turns CORS off.',
  }),
  setting({
    key: 'rateLimit',
    env: 'ALGOSERVE_RATE_LIMIT',
    default: 0,
    parse: integer(0, 100_000_000),
    description:
      'Requests per client per window on /invoke and /jobs; beyond it 429 with Retry-After. 0: off.',
  }),
  setting({
    key: 'rateLimitWindowMs',
    env: 'ALGOSERVE_RATE_LIMIT_WINDOW_MS',
    default: 60_000,
    parse: integer(1000, 86_400_000),
    description: 'The rate limit window, in ms.',
  }),
  setting({
    key: 'trustProxy',
    env: 'ALGOSERVE_TRUST_PROXY',
    default: false,
    parse: boolean,
    description:
      'Take the client address from X-Forwarded-For (behind a trusted proxy), for rate limits and logs.',
  }),
  setting({
    key: 'maxJsonDepth',
    env: 'ALGOSERVE_MAX_JSON_DEPTH',
    default: 32,
    parse: integer(1, 1000),
    description: 'Most nesting levels of arrays and objects in a request body; deeper is 422 json_invalid.',
  }),
  setting({
    key: 'maxJsonValues',
    env: 'ALGOSERVE_MAX_JSON_VALUES',
    default: 10_000,
    parse: integer(1, 10_000_000),
    description: 'Most JSON values in a request body; more is 422 json_invalid, refused as soon as counted.',
  }),
  setting({
    key: 'maxStringLength',
    env: 'ALGOSERVE_MAX_STRING_LENGTH',
    default: 1_048_576,
    parse: integer(1, 1_073_741_824),
    description:
      'Most characters of one string, key or value, between its quotes in a request body; longer is 422 json_invalid.',
  }),
  setting({
    key: 'maxBodyBytesCeiling',
    env: 'ALGOSERVE_MAX_BODY_BYTES_CEILING',
    default: 16 * 1_048_576,
    parse: integer(64, 1_073_741_824),
    description:
      "Most an algorithm's maxBodyBytes may declare; a larger declaration stops the start. Never below ALGOSERVE_MAX_BODY_BYTES.",
  }),
  setting({
    key: 'maxJsonValuesCeiling',
    env: 'ALGOSERVE_MAX_JSON_VALUES_CEILING',
    default: 1_000_000,
    parse: integer(1, 10_000_000),
    description:
      "Most an algorithm's maxJsonValues may declare; a larger declaration stops the start. Never below ALGOSERVE_MAX_JSON_VALUES.",
  }),
  setting({
    key: 'maxJsonDepthCeiling',
    env: 'ALGOSERVE_MAX_JSON_DEPTH_CEILING',
    default: 256,
    parse: integer(1, 1000),
    description:
      "Most an algorithm's maxJsonDepth may declare; a larger declaration stops the start. Never below ALGOSERVE_MAX_JSON_DEPTH.",
  }),
  setting({
    key: 'maxStringLengthCeiling',
    env: 'ALGOSERVE_MAX_STRING_LENGTH_CEILING',
    default: 16 * 1_048_576,
    parse: integer(1, 1_073_741_824),
    description:
      "Most an algorithm's maxStringLength may declare; a larger declaration stops the start. Never below ALGOSERVE_MAX_STRING_LENGTH.",
  }),
  setting({
    key: 'maxDigitsCeiling',
    env: 'ALGOSERVE_MAX_DIGITS_CEILING',
    default: 100_000,
    parse: integer(1, 1_000_000),
    description:
      "Most an algorithm's maxDigits may declare; a larger declaration stops the start. Never below ALGOSERVE_MAX_DIGITS.",
  }),
  setting({
    key: 'headersTimeoutMs',
    env: 'ALGOSERVE_HEADERS_TIMEOUT_MS',
    default: 10_000,
    parse: integer(100, 3_600_000),
    description: 'Time a client has to send the request headers, in ms; then 408 and the connection closes.',
  }),
  setting({
    key: 'requestTimeoutMs',
    env: 'ALGOSERVE_REQUEST_TIMEOUT_MS',
    default: 30_000,
    parse: integer(100, 3_600_000),
    description: 'Time a client has to send the whole request, body included, in ms; then 408 and close.',
  }),
  setting({
    key: 'keepAliveTimeoutMs',
    env: 'ALGOSERVE_KEEP_ALIVE_TIMEOUT_MS',
    default: 5_000,
    parse: integer(1, 3_600_000),
    description: 'How long an idle keep-alive connection stays open between requests, in ms.',
  }),
  setting({
    key: 'maxBufferedBodyBytes',
    env: 'ALGOSERVE_MAX_BUFFERED_BODY_BYTES',
    default: 64 * 1_048_576,
    parse: integer(1024, 68_719_476_736),
    description: 'Most request-body bytes held at once over all requests; beyond it 503 with Retry-After.',
  }),
  setting({
    key: 'invokeQueueTimeoutMs',
    env: 'ALGOSERVE_INVOKE_QUEUE_TIMEOUT_MS',
    default: 2_000,
    parse: integer(0, 3_600_000),
    description: 'Longest wait of POST /invoke for a worker thread, in ms; then 503 with Retry-After.',
  }),
  setting({
    key: 'drainDelayMs',
    env: 'ALGOSERVE_DRAIN_DELAY_MS',
    default: 5_000,
    parse: integer(0, 3_600_000),
    description:
      'On SIGTERM, how long the listener stays open with /readyz at 503 before it closes, in ms (SIGINT: none).',
  }),
  setting({
    key: 'algorithms',
    env: 'ALGOSERVE_ALGORITHMS',
    default: [],
    parse: (raw: string) =>
      raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    description:
      'Algorithm modules to serve (besides PrimeChecker, unless ALGOSERVE_PRIME_CHECKER=false), comma-separated: module files (.js/.mjs), folders (one with an algorithm.json is a process algorithm; otherwise each .js/.mjs file and each folder with an algorithm.json directly inside) and installed package names (docs/algorithms.md).',
  }),
  setting({
    key: 'defaultVersions',
    env: 'ALGOSERVE_DEFAULT_VERSIONS',
    default: new Map() as ReadonlyMap<string, readonly DefaultShare[]>,
    parse: defaultVersions,
    description:
      'The version an algorithm called without one runs, where not its highest: comma-separated Name@version; two or more of one name split its calls and jobs by weight (Sum@1.2.0:90,Sum@1.3.0:10). A version not loaded stops the start.',
  }),
  setting({
    key: 'deprecatedVersions',
    env: 'ALGOSERVE_DEPRECATED_VERSIONS',
    default: new Map() as DeprecatedVersions,
    parse: deprecatedVersions,
    description:
      'Deprecated versions, comma-separated Name@version, each with its sunset day if any (Sum@1.0.0:2027-06-30): their responses carry Deprecation (and Sunset) headers, and the listings and API documents mark them.',
  }),
  setting({
    key: 'workerAlgorithms',
    env: 'ALGOSERVE_WORKER_ALGORITHMS',
    default: [],
    parse: list,
    description:
      'With Redis: the algorithms whose jobs this process takes (of every version of each it loads), comma-separated names of loaded algorithms; empty for every one it loads. Jobs of the others wait for a process that takes them.',
  }),
  setting({
    key: 'invokeTimeoutMs',
    env: 'ALGOSERVE_INVOKE_TIMEOUT_MS',
    default: 30_000,
    parse: integer(1, 3_600_000),
    description:
      "Hard time limit of a synchronous call, in ms, and the most an algorithm's own timeoutMs gives one; past it the worker thread is terminated and the call is 500 ALGORITHM_ERROR.",
  }),
  setting({
    key: 'threadHeapMb',
    env: 'ALGOSERVE_THREAD_HEAP_MB',
    default: 0,
    parse: integer(0, 1_048_576),
    description:
      'Heap limit of each worker thread, in MB; a run that needs more fails alone and its thread is replaced. 0: Node.js default.',
  }),
  setting({
    key: 'algorithmMemoryMb',
    env: 'ALGOSERVE_ALGORITHM_MEMORY_MB',
    default: 0,
    parse: integer(0, 1_048_576),
    description:
      "Memory limit of an algorithm that declares no memoryMb, in MB: a process algorithm's program and each of its children get it as RLIMIT_DATA. 0: none.",
  }),
  setting({
    key: 'primeChecker',
    env: 'ALGOSERVE_PRIME_CHECKER',
    default: true,
    parse: boolean,
    description:
      'Serve the built-in PrimeChecker and POST /invoke; false serves only ALGOSERVE_ALGORITHMS (POST /invoke then answers 404 ALGORITHM_NOT_FOUND).',
  }),
  setting({
    key: 'watch',
    env: 'ALGOSERVE_WATCH',
    default: false,
    parse: boolean,
    description:
      'Reload the algorithms when a file or folder of ALGOSERVE_ALGORITHMS changes, as SIGHUP does (docs/operating.md#reloading-the-algorithms).',
  }),
  setting({
    key: 'apiTitle',
    env: 'ALGOSERVE_API_TITLE',
    default: null,
    parse: optionalLine(200),
    description: 'Title of /openapi.json, /docs and /redoc; none: Algoserve.',
  }),
  setting({
    key: 'apiVersion',
    env: 'ALGOSERVE_API_VERSION',
    default: null,
    parse: optionalLine(64),
    description: "Version of /openapi.json (info.version); none: the service's version.",
  }),
  setting({
    key: 'apiDescription',
    env: 'ALGOSERVE_API_DESCRIPTION',
    default: null,
    parse: optionalText(65_536),
    description:
      "Description of /openapi.json, Markdown, shown atop /docs and /redoc; none: Algoserve's own.",
  }),
]

type AnySetting = (typeof SETTINGS)[number]

/** The settings' values by key, typed from the table: a new row is a new member. */
export type Config = { [S in AnySetting as S['key']]: ReturnType<S['parse']> }

/** `ALGOSERVE_MAX_BODY_BYTES` → `--max-body-bytes`. */
export function flagName(env: string): string {
  return `--${env
    .replace(/^ALGOSERVE_/, '')
    .toLowerCase()
    .replaceAll('_', '-')}`
}

export function defaultConfig(): Config {
  return configOf((s) => s.default)
}

/** A Config with each setting's value from `value`, checked to hold every key. */
function configOf(value: <K extends string, T>(s: Setting<K, T>) => T): Config {
  const config: Record<string, unknown> = {}
  for (const s of SETTINGS) config[s.key] = value<string, unknown>(s)
  if (!isConfig(config)) throw new Error('a setting has no value')
  return config
}

function isConfig(values: Record<string, unknown>): values is Config {
  return SETTINGS.every((s) => s.key in values)
}

/**
 * Reads the settings from flags (`--port 8000` or `--port=8000`) and the environment. A boolean flag
 * alone (`--run-jobs`) is true; it takes a value only as `--run-jobs=false` or a word that a boolean
 * takes (`--run-jobs false`).
 */
export function loadConfig(args: readonly string[], env: Record<string, string | undefined>): Config {
  const flags = new Map<string, string>()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    const [name, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined]
    const known = SETTINGS.find((s) => flagName(s.env) === name)
    if (known === undefined)
      throw new ConfigError(`Unknown argument '${arg}'. Run with --help for the settings.`)
    if (inline === undefined && known.parse === boolean) {
      const word = args[i + 1]?.trim().toLowerCase() ?? ''
      const isWord = TRUE_WORDS.includes(word) || FALSE_WORDS.includes(word)
      flags.set(known.env, isWord ? (args[++i] as string) : 'true')
      continue
    }
    const value = inline ?? args[++i]
    if (value === undefined) throw new ConfigError(`${name} (${known.env}) needs a value.`)
    flags.set(known.env, value)
  }
  const config = configOf((s) => {
    const raw = flags.get(s.env) ?? env[s.env]
    if (raw === undefined) return s.default
    try {
      return s.parse(raw)
    } catch (error) {
      const source = flags.has(s.env) ? `${flagName(s.env)} (${s.env})` : s.env
      const shown = s.secret ? '' : `=${JSON.stringify(raw)}`
      throw new ConfigError(`Invalid ${source}${shown}: ${(error as Error).message}.`)
    }
  })
  checkRedisSettings(config)
  return config
}

/**
 * The Redis settings that only make sense together: a setting that would be ignored stops the start
 * instead. No message repeats the URL (it may hold a password).
 */
function checkRedisSettings(config: Config): void {
  const fail = (message: string) => {
    throw new ConfigError(message)
  }
  const cluster = config.redisClusterNodes.length > 0
  const sentinel = config.redisSentinels.length > 0
  if (config.redisUrl === null) {
    for (const [set, name] of [
      [cluster, 'ALGOSERVE_REDIS_CLUSTER_NODES'],
      [sentinel, 'ALGOSERVE_REDIS_SENTINELS'],
      [config.redisSentinelName !== null, 'ALGOSERVE_REDIS_SENTINEL_NAME'],
      [config.redisTlsCaFile !== null, 'ALGOSERVE_REDIS_TLS_CA_FILE'],
      [config.redisMinReplicas > 0, 'ALGOSERVE_REDIS_MIN_REPLICAS'],
    ] as const) {
      if (set) fail(`${name} needs ALGOSERVE_REDIS_URL (its user, password and TLS are the URL's).`)
    }
    if (config.workerAlgorithms.length > 0) {
      fail(
        'ALGOSERVE_WORKER_ALGORITHMS needs ALGOSERVE_REDIS_URL: with the embedded store, its one process runs every job.',
      )
    }
    return
  }
  const url = new URL(config.redisUrl)
  const address = `${url.hostname}:${url.port === '' ? '6379' : url.port}`
  if (cluster && sentinel)
    fail('ALGOSERVE_REDIS_CLUSTER_NODES and ALGOSERVE_REDIS_SENTINELS exclude each other.')
  if (sentinel !== (config.redisSentinelName !== null)) {
    fail('ALGOSERVE_REDIS_SENTINELS and ALGOSERVE_REDIS_SENTINEL_NAME go together: set both or neither.')
  }
  if (cluster && !config.redisClusterNodes.includes(address)) {
    fail(`ALGOSERVE_REDIS_URL's host:port (${address}) must be one of ALGOSERVE_REDIS_CLUSTER_NODES.`)
  }
  if (sentinel && !config.redisSentinels.includes(address)) {
    fail(`ALGOSERVE_REDIS_URL's host:port (${address}) must be one of ALGOSERVE_REDIS_SENTINELS.`)
  }
  if (cluster && url.pathname !== '' && url.pathname !== '/' && url.pathname !== '/0') {
    fail('A Redis Cluster has only database 0: ALGOSERVE_REDIS_URL may not name another.')
  }
  if (cluster && config.redisMinReplicas > 0) {
    fail('ALGOSERVE_REDIS_MIN_REPLICAS is for one server or Sentinel, not a Redis Cluster.')
  }
  if (cluster && hashTag(config.redisPrefix) === null) {
    fail(
      `On a Redis Cluster ALGOSERVE_REDIS_PREFIX must be hash-tagged, as in {${config.redisPrefix.replace(/[{}]/g, '')}}, ` +
        'so that every key of a deployment is in one slot.',
    )
  }
  if (config.redisTlsCaFile !== null && url.protocol !== 'rediss:') {
    fail('ALGOSERVE_REDIS_TLS_CA_FILE is for TLS: ALGOSERVE_REDIS_URL must start with rediss://.')
  }
}

/** Redis's hash tag of a key: what is between its first `{` and the next `}`, if not empty. */
export function hashTag(key: string): string | null {
  const open = key.indexOf('{')
  const close = key.indexOf('}', open + 1)
  return open === -1 || close <= open + 1 ? null : key.slice(open + 1, close)
}

/**
 * Warnings for environment variables that look like settings but are none (ALGOSERVE_PROT), each naming
 * the closest setting. Names only: a value may be a secret.
 */
export function unknownSettings(env: Record<string, string | undefined>): string[] {
  const names = SETTINGS.map((s) => s.env)
  return Object.keys(env)
    .filter((name) => name.startsWith('ALGOSERVE_') && !names.includes(name))
    .sort()
    .map((name) => {
      const closest = names.reduce((best, candidate) =>
        editDistance(name, candidate) < editDistance(name, best) ? candidate : best,
      )
      return `${name} is not a setting and is ignored; did you mean ${closest}?`
    })
}

/** Levenshtein distance, for the nearest setting name. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution))
    }
    previous = current
  }
  return previous[b.length] as number
}

export function settingsHelp(): string {
  return SETTINGS.map(
    (s) =>
      `  ${flagName(s.env).padEnd(32)} ${s.env.padEnd(36)} ${s.description} (default: ${shownDefault(s.default)})`,
  ).join('\n')
}

/** A default as --help and docs/settings.md show it. */
export function shownDefault(value: unknown): string {
  if (value instanceof Map) return value.size > 0 ? [...value.keys()].join(',') : 'none'
  if (Array.isArray(value)) return value.length > 0 ? value.join(',') : 'none'
  return String(value ?? 'none')
}

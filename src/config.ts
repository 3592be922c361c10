// Settings: each one an ALGOSERVE_* environment variable and a matching flag (the flag wins), read once
// and validated at start. A bad value stops the process with a message naming the setting.

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export interface Config {
  host: string
  port: number
  dataDir: string
  maxDigits: number
  maxBodyBytes: number
  invokeFactorBudgetMs: number
  workerThreads: number
  shutdownGraceMs: number
  logLevel: (typeof LOG_LEVELS)[number]
}

interface Setting<K extends keyof Config> {
  key: K
  env: string
  default: Config[K]
  description: string
  parse: (raw: string) => Config[K]
}

export class ConfigError extends Error {
  override name = 'ConfigError'
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

function setting<K extends keyof Config>(s: Setting<K>): Setting<K> {
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
    description: 'Worker threads for algorithm work; 0 means one per core but one (at least one).',
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
]

/** `ALGOSERVE_MAX_BODY_BYTES` → `--max-body-bytes`. */
export function flagName(env: string): string {
  return `--${env
    .replace(/^ALGOSERVE_/, '')
    .toLowerCase()
    .replaceAll('_', '-')}`
}

export function defaultConfig(): Config {
  return Object.fromEntries(SETTINGS.map((s) => [s.key, s.default])) as unknown as Config
}

/** Reads the settings from flags (`--port 8000` or `--port=8000`) and the environment. */
export function loadConfig(args: readonly string[], env: Record<string, string | undefined>): Config {
  const flags = new Map<string, string>()
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    const [name, inline] = arg.split(/=(.*)/s, 2) as [string, string | undefined]
    const known = SETTINGS.find((s) => flagName(s.env) === name)
    if (known === undefined)
      throw new ConfigError(`Unknown argument '${arg}'. Run with --help for the settings.`)
    const value = inline ?? args[++i]
    if (value === undefined) throw new ConfigError(`${name} (${known.env}) needs a value.`)
    flags.set(known.env, value)
  }
  const config: Record<string, unknown> = {}
  for (const s of SETTINGS) {
    const raw = flags.get(s.env) ?? env[s.env]
    if (raw === undefined) {
      config[s.key] = s.default
      continue
    }
    try {
      config[s.key] = s.parse(raw)
    } catch (error) {
      const source = flags.has(s.env) ? `${flagName(s.env)} (${s.env})` : s.env
      throw new ConfigError(`Invalid ${source}=${JSON.stringify(raw)}: ${(error as Error).message}.`)
    }
  }
  return config as unknown as Config
}

export function settingsHelp(): string {
  return SETTINGS.map(
    (s) => `  ${flagName(s.env).padEnd(30)} ${s.env.padEnd(36)} ${s.description} (default: ${s.default})`,
  ).join('\n')
}

// Every error the service defines, in one file: each class takes its `name` from itself and carries a
// stable `code`, which every log line about it shows. Two kinds share that base: contract errors, which
// `http/error-handler.ts` (the one place) turns into the contract's bodies, and internal faults, which
// never reach a client as they are.
import { isLosslessNumber } from 'lossless-json'

export abstract class CodedError extends Error {
  abstract readonly code: string

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
  }
}

export type ErrorDetails = Record<string, unknown> | null

/** An error a client sees, with its status and the `error` code of the contract's body. */
export abstract class ContractError extends CodedError {
  abstract readonly statusCode: number
  readonly details: ErrorDetails

  constructor(message: string, details: ErrorDetails = null, options?: ErrorOptions) {
    super(message, options)
    this.details = details
  }
}

/** 400: the input passed the schema but breaks a rule of the service. */
export class InputRuleError extends ContractError {
  readonly code = 'VALIDATION_ERROR'
  readonly statusCode = 400

  constructor(message: string, field: string, value: unknown) {
    super(message, { field, value: shortenValue(value ?? null) })
  }
}

/**
 * 400: the algorithm refused its params (an InvalidParamsError, or a program's `invalid_params` error),
 * told in its own words: the caller's fault, not the algorithm's. `field` is null when it named none.
 */
export class AlgorithmInputError extends ContractError {
  readonly code = 'VALIDATION_ERROR'
  readonly statusCode = 400

  constructor(message: string, field: string | null, value: unknown) {
    super(message, { field, value: shortenValue(value ?? null) })
  }
}

export class AlgorithmNotFoundError extends ContractError {
  readonly code = 'ALGORITHM_NOT_FOUND'
  readonly statusCode = 404

  /**
   * `available`: the loaded names; `version`, for a known name asked at a version or range that no loaded
   * version matches: what was asked and the versions loaded.
   */
  constructor(
    name: string,
    available: readonly string[],
    version?: { wanted: string; loaded: readonly string[] },
  ) {
    super(
      version === undefined
        ? `Algorithm '${shortenText(name)}' is not known.`
        : `Algorithm '${shortenText(name)}' has no loaded version matching '${shortenText(version.wanted)}'.`,
      version === undefined
        ? { available_algorithms: [...available] }
        : { available_algorithms: [...available], available_versions: [...version.loaded] },
    )
  }
}

export class JobNotFoundError extends ContractError {
  readonly code = 'JOB_NOT_FOUND'
  readonly statusCode = 404

  constructor(jobId: string) {
    super(`Job '${jobId}' does not exist or has expired.`)
  }
}

/** 409: a cancel of a job that already ended. */
export class JobAlreadyFinishedError extends ContractError {
  readonly code = 'JOB_ALREADY_FINISHED'
  readonly statusCode = 409

  constructor(jobId: string, status: string) {
    super(`Job '${jobId}' has already ended (${status}); it cannot be cancelled.`, { status })
  }
}

/** 409: an Idempotency-Key sent again with a different request. */
export class IdempotencyKeyReusedError extends ContractError {
  readonly code = 'IDEMPOTENCY_KEY_REUSED'
  readonly statusCode = 409

  constructor() {
    super('This Idempotency-Key was used for a different request; use a new key for a new request.')
  }
}

export class PayloadTooLargeError extends ContractError {
  readonly code = 'PAYLOAD_TOO_LARGE'
  readonly statusCode = 413

  /** `howToRaise`, when given, says how the bound (an algorithm's maxBodyBytes) can be raised. */
  constructor(limitBytes: number, howToRaise?: string) {
    super(
      howToRaise === undefined
        ? `The request body is larger than the limit of ${limitBytes} bytes.`
        : `The request body is larger than the limit of ${limitBytes} bytes (maxBodyBytes): ${howToRaise}.`,
      howToRaise === undefined
        ? { limit_bytes: limitBytes }
        : { limit_bytes: limitBytes, bound: 'maxBodyBytes', how_to_raise: howToRaise },
    )
  }
}

/**
 * 500: the algorithm itself failed while running. The client is told why in the algorithm's own words
 * (the message it threw) when there are some; the cause, with its stack, is logged, never sent.
 */
export class AlgorithmError extends ContractError {
  readonly code = 'ALGORITHM_ERROR'
  readonly statusCode = 500

  constructor(algorithm: string, reason: string | null, cause?: unknown) {
    super(`The algorithm '${algorithm}' failed while running${reason ? `: ${reason}` : '.'}`, null, { cause })
  }
}

/** 500: a run went past its time limit, and its worker thread was terminated. */
export class RunTimeLimitError extends AlgorithmError {
  readonly limitMs: number

  constructor(algorithm: string, limitMs: number) {
    super(algorithm, `it exceeded its time limit of ${limitMs / 1000} s and was stopped`)
    this.limitMs = limitMs
  }
}

/**
 * 409: a reload found a file whose content changed at a version already loaded (versions are immutable:
 * a change is a new version). The running set stays as it was.
 */
export class VersionChangedError extends ContractError {
  readonly code = 'VERSION_CHANGED'
  readonly statusCode = 409

  constructor(file: string, name: string, version: string, loadedFrom: string) {
    super(
      `Algorithm ${file}: '${name}' ${version} is loaded already with other content (from ${loadedFrom}); a version cannot change: give the changed file a new version. Nothing was reloaded.`,
      { file, algorithm: name, version },
    )
  }
}

/** 422: the algorithms a reload read could not be loaded; the running set stays as it was. */
export class ReloadFailedError extends ContractError {
  readonly code = 'RELOAD_FAILED'
  readonly statusCode = 422

  constructor(reason: string, cause?: unknown) {
    super(`The algorithms could not be reloaded: ${reason} Nothing was reloaded.`, null, { cause })
  }
}

export class InternalError extends ContractError {
  readonly code = 'INTERNAL_ERROR'
  readonly statusCode = 500

  constructor(cause?: unknown) {
    super('Internal server error.', null, { cause })
  }
}

export class ServiceUnavailableError extends ContractError {
  readonly code = 'SERVICE_UNAVAILABLE'
  readonly statusCode = 503
  readonly retryAfterSeconds: number

  constructor(message: string, retryAfterSeconds = 5) {
    super(message)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** 401: the API needs a key (opt-in, ALGOSERVE_API_KEYS); never says which part of a key was wrong. */
export class UnauthorizedError extends ContractError {
  readonly code = 'UNAUTHORIZED'
  readonly statusCode = 401
  readonly headers: Record<string, string>

  constructor(keyGiven: boolean) {
    super(
      keyGiven ? 'The API key is not accepted.' : 'An API key is required: send Authorization: Bearer <key>.',
    )
    // RFC 6750: a request with no credentials gets the bare challenge, a bad one names the error.
    this.headers = {
      'www-authenticate': keyGiven
        ? 'Bearer realm="algoserve", error="invalid_token"'
        : 'Bearer realm="algoserve"',
    }
  }
}

/** 429: this client sent more requests than ALGOSERVE_RATE_LIMIT allows in a window. */
export class RateLimitedError extends ContractError {
  readonly code = 'RATE_LIMITED'
  readonly statusCode = 429
  readonly headers: Record<string, string>

  constructor(limit: number, windowMs: number, retryAfterSeconds: number) {
    super(`Too many requests: at most ${limit} per ${windowMs / 1000} s; try again later.`, {
      limit,
      window_seconds: windowMs / 1000,
    })
    this.headers = { 'retry-after': String(retryAfterSeconds) }
  }
}

/** One entry of a 422 body's `detail`, in the shape of FastAPI with pydantic v2 (the client's view). */
export interface ValidationDetail {
  type: string
  loc: (string | number)[]
  msg: string
  input: unknown
  ctx?: Record<string, unknown>
}

/** 422: the request failed the schema; its body is FastAPI's list of problems, not the service's shape. */
export class SchemaValidationError extends CodedError {
  readonly code = 'REQUEST_VALIDATION_FAILED'
  readonly statusCode = 422
  readonly problems: ValidationDetail[]

  constructor(problems: ValidationDetail[]) {
    super(problems.map((p) => `${p.loc.join('.')}: ${p.msg}`).join('; '))
    this.problems = problems
  }
}

const MAX_SHOWN_CHARS = 64
const MAX_SHOWN_ITEMS = 8
const MAX_SHOWN_DEPTH = 4

/**
 * A client's value as error bodies echo it, bounded in size whatever was sent: small values exactly;
 * a long string or number as "1234567890…(5000 digits)", an array or object by its first members and
 * a count of the rest, and nesting below a few levels by a count alone.
 */
export function shortenValue(value: unknown, depth = 0): unknown {
  if (isLosslessNumber(value)) return value.value.length > MAX_SHOWN_CHARS ? shortenValue(value.value) : value
  if (typeof value === 'string') return value.length > MAX_SHOWN_CHARS ? shortenText(value) : value
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    if (depth >= MAX_SHOWN_DEPTH) return `…(an array of ${value.length} items)`
    const shown = value.slice(0, MAX_SHOWN_ITEMS).map((item) => shortenValue(item, depth + 1))
    if (value.length > MAX_SHOWN_ITEMS) shown.push(`…(${value.length - MAX_SHOWN_ITEMS} more items)`)
    return shown
  }
  const keys = Object.keys(value)
  if (depth >= MAX_SHOWN_DEPTH) return `…(an object of ${keys.length} members)`
  const shown: Record<string, unknown> = {}
  for (const key of keys.slice(0, MAX_SHOWN_ITEMS)) {
    Object.defineProperty(shown, shortenText(key), {
      value: shortenValue((value as Record<string, unknown>)[key], depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  if (keys.length > MAX_SHOWN_ITEMS) shown['…'] = `(${keys.length - MAX_SHOWN_ITEMS} more members)`
  return shown
}

function shortenText(value: string): string {
  if (value.length <= MAX_SHOWN_CHARS) return value
  const unit = /^-?[0-9]+$/.test(value) ? 'digits' : 'characters'
  const count = unit === 'digits' ? value.replace('-', '').length : value.length
  return `${value.slice(0, 10)}…(${count} ${unit})`
}

/** The pydantic v2 error types the contract uses, with their messages (docs/api.md, "422: the schema"). */
export const PROBLEM_MESSAGES = {
  missing: 'Field required',
  int_type: 'Input should be a valid integer',
  int_parsing: 'Input should be a valid integer, unable to parse string as an integer',
  int_from_float: 'Input should be a valid integer, got a number with a fractional part',
  string_type: 'Input should be a valid string',
  dict_type: 'Input should be a valid dictionary',
  model_attributes_type: 'Input should be a valid dictionary or object to extract fields from',
  json_invalid: 'JSON decode error',
  float_parsing: 'Input should be a valid number, unable to parse string as a number',
} as const

export type ProblemType =
  | keyof typeof PROBLEM_MESSAGES
  | 'string_pattern_mismatch'
  | 'enum'
  | 'greater_than_equal'
  | 'less_than_equal'
  | 'value_error'

/** A fault inside the service: logged with its code, answered (if at all) as another error. */
export abstract class InternalFault extends CodedError {}

/** 422: a GET /jobs cursor this service did not give (or mangled); the route reports it as a 422. */
export class BadCursorError extends InternalFault {
  readonly code = 'BAD_CURSOR'

  constructor(readonly cursor: string) {
    super('The cursor is not one this service gave.')
  }
}

/** The job store cannot be reached or written: the routes answer 503 SERVICE_UNAVAILABLE. */
export class StoreUnavailableError extends InternalFault {
  readonly code = 'STORE_UNAVAILABLE'
}

/**
 * What a job store's call throws when it fails: one of ours as it is (a full store, a taken id, a
 * reused Idempotency-Key), anything else (the database's or Redis's own failure) as unavailable.
 */
export function storeFailure(error: unknown, message: string): CodedError {
  return error instanceof CodedError ? error : new StoreUnavailableError(message, { cause: error })
}

/** More jobs wait than the configured maximum: POST /jobs answers 503 with Retry-After. */
export class StoreFullError extends InternalFault {
  readonly code = 'STORE_FULL'
}

/** The new job's id is taken already (48 random bits: rare, but possible); the route draws again. */
export class DuplicateJobIdError extends InternalFault {
  readonly code = 'DUPLICATE_JOB_ID'
}

/** The reason work in flight is aborted at the end of a shutdown's grace period: it is given back. */
export class ShutdownAbort extends InternalFault {
  readonly code: string = 'SHUTDOWN_ABORT'
}

/**
 * A job taken by a process that has not loaded its pinned version (a reload unloaded it since the take): it
 * is given back, as at a shutdown, and waits for a process that has it.
 */
export class VersionNotLoadedAbort extends ShutdownAbort {
  override readonly code = 'VERSION_NOT_LOADED'
}

/** The reason a run is aborted once its lock (Redis) has lapsed: the job is another worker's now. */
export class LockLostAbort extends InternalFault {
  readonly code = 'LOCK_LOST'
}

/** A webhook's host resolved to an address the address rule refuses. */
export class WebhookAddressRefusedError extends InternalFault {
  readonly code = 'WEBHOOK_ADDRESS_REFUSED'

  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, which is not a public address`)
  }
}

/** A process algorithm's program was moved to a state its current one does not lead to: a bug here. */
export class ProcessStateError extends InternalFault {
  readonly code = 'PROCESS_STATE'
}

/** A setting or argument is invalid: the process stops with this message, naming the setting. */
export class ConfigError extends InternalFault {
  readonly code = 'CONFIG_INVALID'
}

/** The Redis given cannot hold jobs safely (it evicts keys): the process refuses to start. */
export class RedisRefusedError extends InternalFault {
  readonly code = 'REDIS_REFUSED'
}

/**
 * The abort reason of a run stopped by POST /jobs/{job_id}/cancel (a string: BullMQ's cancelJob takes one).
 */
export const CANCEL_REASON = 'algoserve: the job was cancelled'
/** The error of a cancelled job. */
export const JOB_CANCELLED = 'The job was cancelled.'

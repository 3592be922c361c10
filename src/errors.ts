import { isLosslessNumber } from 'lossless-json'

// The service's errors: a small set of classes with stable codes. `error-handler.ts` is the one place
// that turns them into the contract's bodies; nothing else formats an error for a client.

export type ErrorDetails = Record<string, unknown> | null

export abstract class AlgoserveError extends Error {
  abstract readonly code: string
  abstract readonly statusCode: number
  readonly details: ErrorDetails

  constructor(message: string, details: ErrorDetails = null, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.details = details
  }
}

/** 400: the input passed the schema but breaks a rule of the service. */
export class ValidationError extends AlgoserveError {
  readonly code = 'VALIDATION_ERROR'
  readonly statusCode = 400

  constructor(message: string, field: string, value: unknown) {
    super(message, { field, value: shortenValue(value ?? null) })
  }
}

export class AlgorithmNotFoundError extends AlgoserveError {
  readonly code = 'ALGORITHM_NOT_FOUND'
  readonly statusCode = 404

  constructor(name: string, available: readonly string[]) {
    super(`Algorithm '${name}' is not known.`, { available_algorithms: [...available] })
  }
}

export class JobNotFoundError extends AlgoserveError {
  readonly code = 'JOB_NOT_FOUND'
  readonly statusCode = 404

  constructor(jobId: string) {
    super(`Job '${jobId}' does not exist or has expired.`)
  }
}

export class PayloadTooLargeError extends AlgoserveError {
  readonly code = 'PAYLOAD_TOO_LARGE'
  readonly statusCode = 413

  constructor(limitBytes: number) {
    super(`The request body is larger than the limit of ${limitBytes} bytes.`, { limit_bytes: limitBytes })
  }
}

/** 500: the algorithm itself failed while running. The cause is logged, never sent. */
export class AlgorithmError extends AlgoserveError {
  readonly code = 'ALGORITHM_ERROR'
  readonly statusCode = 500

  constructor(algorithm: string, cause: unknown) {
    super(`The algorithm '${algorithm}' failed while running.`, null, { cause })
  }
}

export class InternalError extends AlgoserveError {
  readonly code = 'INTERNAL_ERROR'
  readonly statusCode = 500

  constructor(cause?: unknown) {
    super('Internal server error.', null, { cause })
  }
}

/** 500: the worker thread running a call died (not the algorithm's fault; a job's run is lost). */
export class WorkerLostError extends InternalError {}

export class ServiceUnavailableError extends AlgoserveError {
  readonly code = 'SERVICE_UNAVAILABLE'
  readonly statusCode = 503
  readonly retryAfterSeconds: number

  constructor(message: string, retryAfterSeconds = 5) {
    super(message)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** One entry of a 422 body, in the shape of FastAPI with pydantic v2. */
export interface SchemaProblem {
  type: string
  loc: (string | number)[]
  msg: string
  input: unknown
  ctx?: Record<string, unknown>
}

/** 422: the request failed the schema. */
export class RequestValidationError extends Error {
  readonly statusCode = 422
  readonly problems: SchemaProblem[]

  constructor(problems: SchemaProblem[]) {
    super(problems.map((p) => `${p.loc.join('.')}: ${p.msg}`).join('; '))
    this.name = 'RequestValidationError'
    this.problems = problems
  }
}

const MAX_SHOWN_CHARS = 64

/** Long values are shortened for error details, e.g. "1234567890…(5000 digits)". */
export function shortenValue(value: unknown): unknown {
  if (isLosslessNumber(value)) return value.value.length > MAX_SHOWN_CHARS ? shortenValue(value.value) : value
  if (typeof value !== 'string' || value.length <= MAX_SHOWN_CHARS) return value
  const unit = /^-?[0-9]+$/.test(value) ? 'digits' : 'characters'
  const count = unit === 'digits' ? value.replace('-', '').length : value.length
  return `${value.slice(0, 10)}…(${count} ${unit})`
}

/** The pydantic v2 error types the contract uses, with their messages (decisions.md, Errors). */
export const PROBLEM_MESSAGES = {
  missing: 'Field required',
  int_type: 'Input should be a valid integer',
  int_parsing: 'Input should be a valid integer, unable to parse string as an integer',
  int_from_float: 'Input should be a valid integer, got a number with a fractional part',
  string_type: 'Input should be a valid string',
  dict_type: 'Input should be a valid dictionary',
  model_attributes_type: 'Input should be a valid dictionary or object to extract fields from',
  json_invalid: 'JSON decode error',
} as const

export type ProblemType = keyof typeof PROBLEM_MESSAGES | 'string_pattern_mismatch'

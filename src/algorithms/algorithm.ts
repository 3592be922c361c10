// What an algorithm is: one ES module whose default export is a plain object (docs/algorithms.md). It
// needs no import of ours; `defineAlgorithm` only types it. The loader (loader.ts) checks the object and
// compiles its schemas into an `Algorithm`, which the routes, the executor and the job runner use.

/** A JSON Schema, as written in a module (TypeBox's output is one). */
export type JsonSchema = Record<string, unknown>

/** What `run` is given besides its params. */
export interface RunContext {
  /** Aborts at the time limit, at a cancel and at a shutdown: long runs should check it. */
  signal: AbortSignal
  /** The time limit as a Unix time in ms (Date.now()); the run is stopped then, checked or not. */
  deadline: number
  /**
   * How long work that can be cut short should go on, in ms (ALGOSERVE_INVOKE_FACTOR_BUDGET_MS or
   * ALGOSERVE_JOB_FACTOR_BUDGET_MS): an algorithm that can answer with a partial result stops then.
   */
  budgetMs: number
  /**
   * Reports how far the run has come: `fraction` from 0 to 1 (clamped), `message` an optional line of
   * text. Call it as often as is convenient: updates are coalesced before they leave the run's thread,
   * and a non-finite fraction or a message that is not a string is ignored rather than thrown.
   */
  progress(fraction: number, message?: string): void
  /**
   * The W3C Trace Context of the request or job the run is part of, when Algoserve traces it
   * (docs/tracing.md): an OpenTelemetry SDK continues the trace with `propagation.extract(context, trace)`.
   */
  trace?: { traceparent: string; tracestate?: string }
}

/** Params as a client sends them (JSON), shown in the documents. */
export interface AlgorithmExample {
  params: Record<string, unknown>
}

/** The default export of an algorithm module. */
export interface AlgorithmModule<Params = unknown, Result = unknown> {
  /** Unique; letters, digits, '_' and '-'. The `algorithm` of jobs. */
  name: string
  /** Semver, reported in every result's metadata. */
  version: string
  description: string
  /** JSON Schema of the params: an object. */
  params: JsonSchema
  /** JSON Schema of the result. */
  result: JsonSchema
  examples?: AlgorithmExample[]
  /** Hard limit of one run, in ms. */
  timeoutMs?: number
  /** The most jobs of it running at once in one Algoserve process; default: the process's job concurrency. */
  concurrency?: number
  /**
   * The most memory one run may use, in MB: a program's processes get it as an OS limit; a module's
   * runs are held to it as docs/algorithms.md says. Default: ALGOSERVE_ALGORITHM_MEMORY_MB.
   */
  memoryMb?: number
  /** The longest result a run may send back, in bytes of JSON. Default: docs/algorithms.md. */
  maxResultBytes?: number
  /** The longest progress message a run may send, in bytes of JSON. Default: docs/algorithms.md. */
  maxProgressBytes?: number
  /**
   * Bounds on a request for it (docs/algorithms.md, request bounds), each at most its operator's ceiling:
   * the largest body in bytes, the most JSON values, the deepest nesting, the longest string (characters
   * between its quotes in the body), the most digits of an integer. Default: ALGOSERVE_MAX_BODY_BYTES,
   * ALGOSERVE_MAX_JSON_VALUES, ALGOSERVE_MAX_JSON_DEPTH, ALGOSERVE_MAX_STRING_LENGTH, ALGOSERVE_MAX_DIGITS.
   */
  maxBodyBytes?: number
  maxJsonValues?: number
  maxJsonDepth?: number
  maxStringLength?: number
  maxDigits?: number
  run(params: Params, context: RunContext): Result | Promise<Result>
}

/** Typed identity: `export default defineAlgorithm({ ... })`. */
export function defineAlgorithm<Params = unknown, Result = unknown>(
  module: AlgorithmModule<Params, Result>,
): AlgorithmModule<Params, Result> {
  return module
}

export interface ParamLimits {
  /** The most decimal digits an integer parameter may have. */
  maxDigits: number
  /** How to raise maxDigits, for the 400 past it (request-bounds.ts). */
  howToRaise?: string
}

/**
 * Shortcuts a built-in module may carry under this symbol (no module file can clash with it, and the
 * contract check does not see it): its own params reading, and runs cheap enough to do on the thread
 * that serves HTTP, with no hop to a worker thread.
 */
export const INLINE = Symbol.for('algoserve.inline')

export interface InlineRuns<Params = unknown, Result = unknown> {
  /**
   * Reads raw (losslessly parsed) params into what `run` takes; throws an InputRuleError (400) naming
   * the field as `${fieldPrefix}${name}`. Runs before the params schema.
   */
  parseParams(raw: Record<string, unknown>, limits: ParamLimits, fieldPrefix: string): Params
  /** True when the run is cheap enough (microseconds) to do on the thread that serves HTTP. */
  isCheap(params: Params): boolean
  /**
   * For params that isCheap cannot judge from their size alone: the result when it is found in
   * microseconds, otherwise undefined and the run goes to a worker thread.
   */
  runIfCheap?(params: Params, context: RunContext): Result | undefined
}

export const SERVICE_NOTES = Symbol.for('algoserve.service-notes')

/**
 * What the OpenAPI document's own description says of the algorithm POST /invoke calls: a sentence after
 * "Algorithms over HTTP.", and notes (Markdown list items, each line ending in a newline) before the
 * service's own.
 */
export interface ServiceNotes {
  intro: string
  notes: string
}

/** A module with its inline shortcuts and its notes (built-in modules only). */
export type BuiltInModule<Params = unknown, Result = unknown> = AlgorithmModule<Params, Result> & {
  [INLINE]?: InlineRuns<Params, Result>
  [SERVICE_NOTES]?: ServiceNotes
}

/**
 * One problem found by an algorithm's JSON Schema check (schema-check.ts): where (a path into the value)
 * and what; params.ts words it as a ValidationDetail of a 422 body.
 */
export interface SchemaCheckIssue {
  path: (string | number)[]
  keyword: string
  message: string
  params: Record<string, unknown>
}

/**
 * Bounds on one request for an algorithm: its body's bytes, JSON values, depth and longest string, an
 * integer's digits.
 */
export interface RequestBounds {
  maxBodyBytes: number
  maxJsonValues: number
  maxJsonDepth: number
  maxStringLength: number
  maxDigits: number
}

/** How a process algorithm (a folder with an algorithm.json) is run: docs/algorithms.md. */
export interface ProcessSpec {
  /** The argv started, in `cwd`. */
  command: string[]
  /** The folder of its algorithm.json. */
  cwd: string
  /** Processes kept per Algoserve process. */
  instances: number
}

/** A loaded, checked module with its compiled schemas. */
export interface Algorithm {
  readonly name: string
  readonly version: string
  readonly description: string
  readonly module: BuiltInModule
  /** The file it was loaded from, for messages. */
  readonly source: string
  readonly timeoutMs: number | null
  /** The most of its jobs running at once in one Algoserve process, when it declares so. */
  readonly concurrency: number | null
  /** Its declared memory limit per run, in MB, when it declares one. */
  readonly memoryMb: number | null
  /** Its declared bound on a result's JSON, in bytes, when it declares one. */
  readonly maxResultBytes: number | null
  /** Its declared bound on a progress message's JSON, in bytes, when it declares one. */
  readonly maxProgressBytes: number | null
  /** The request bounds it declares (request-bounds.ts gives those in effect). */
  readonly requestBounds: Partial<RequestBounds>
  readonly inline: InlineRuns | undefined
  /** Set for a process algorithm: its runs go to its processes, never to a worker thread. */
  readonly process?: ProcessSpec
  /** The problems of params against the params schema; none when they pass. */
  checkParams(params: unknown): SchemaCheckIssue[]
  /** The problems of a result against the result schema; none when it passes. */
  checkResult(result: unknown): SchemaCheckIssue[]
}

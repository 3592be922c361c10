// How a route declares the examples of its operation in the OpenAPI document, beside its schema
// (`'x-examples'`), and the values those examples share. The one shown for a status is what that status
// answers (a shared schema's example would show one code for every status); a request example is what
// "Try it out" sends, so each one succeeds. openapi.ts writes them into the document when it is built.
import { PayloadTooLargeError } from '../errors.js'
import type { NamedExample, ShownAlgorithm } from './algorithm-examples.js'

export interface OperationExamples {
  /** The request body. */
  request?: unknown
  /** Several request bodies, named, in place of `request`. */
  requestExamples?: Record<string, NamedExample>
  /** Parameters, by name. */
  parameters?: Record<string, unknown>
  /** A body for each status. */
  responses: Record<string, unknown>
}

/** What the document knows when it is built: the algorithm its job examples show. */
export interface ExampleContext {
  shown: ShownAlgorithm
}

declare module 'fastify' {
  interface FastifySchema {
    /** The operation's examples; written when the document is built, so as not to slow the start. */
    'x-examples'?: (context: ExampleContext) => OperationExamples
  }
}

export const REQUEST_ID = 'b1946ac9-2ad7-4a5f-9c67-3d2f0c3e4f10'
export const JOB_ID = '3e3682166bbe'

/** An error body as /invoke writes it. */
export const flat = (error: string, message: string, details: Record<string, unknown> | null = null) => ({
  error,
  message,
  details,
  request_id: REQUEST_ID,
})

/** An error body as the job routes write it. */
export const wrapped = (error: string, message: string, details: Record<string, unknown> | null = null) => ({
  detail: flat(error, message, details),
})

/** A 422 body with one problem. */
export const problem = (type: string, loc: (string | number)[], msg: string, input: unknown) => ({
  detail: [{ type, loc, msg, input }],
})

/** The 413 answer to a body over this limit, as `flat` and `wrapped` take it. */
export const tooLarge = (limitBytes: number) => {
  const error = new PayloadTooLargeError(limitBytes)
  return [error.code, error.message, { ...error.details }] as const
}

export const STORE_UNAVAILABLE = wrapped(
  'SERVICE_UNAVAILABLE',
  'The job store is unavailable; try again later.',
)

export const JOB_NOT_FOUND = wrapped('JOB_NOT_FOUND', `Job '${JOB_ID}' does not exist or has expired.`)

export const JOB_ID_PROBLEM = {
  detail: [
    {
      type: 'string_pattern_mismatch',
      loc: ['path', 'job_id'],
      msg: "String should match pattern '^[0-9a-f]{12}$'",
      input: 'not-an-id',
      ctx: { pattern: '^[0-9a-f]{12}$' },
    },
  ],
}

/** A job of the algorithm shown, cancelled while it ran. */
export const cancelledJob = (shown: ShownAlgorithm) => ({
  job_id: JOB_ID,
  status: 'failed',
  algorithm: shown.algorithm,
  created_at: '2026-11-21T16:15:09.138+00:00',
  started_at: '2026-11-21T16:15:09.139+00:00',
  completed_at: '2026-11-21T16:15:12.402+00:00',
  result: null,
  error: 'The job was cancelled.',
  metadata: null,
})

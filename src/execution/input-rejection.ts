// An algorithm's refusal of its input, whichever way it ran: a module's error named InvalidParamsError
// (on the event loop, or read back from its thread), or a program's `invalid_params` error line.
import { RunFailure } from './timed-run.js'

/** The `name` that marks a module's error as a refusal of its input (algorithms/invalid-params.ts). */
export const INVALID_PARAMS_NAME = 'InvalidParamsError'

/** A run that refused its input; `field` names the params member at fault, when the algorithm said. */
export class InputRejected extends RunFailure {
  constructor(
    message: string,
    readonly field: string | undefined,
  ) {
    super(message)
  }
}

/** The refusal a run's error is, if it is one: an InputRejected, or a module's error so named. */
export function inputRejectionOf(error: unknown): InputRejected | undefined {
  if (error instanceof InputRejected) return error
  if (typeof error !== 'object' || error === null) return undefined
  const { name, message, field } = error as { name?: unknown; message?: unknown; field?: unknown }
  if (name !== INVALID_PARAMS_NAME || typeof message !== 'string') return undefined
  return new InputRejected(message, typeof field === 'string' ? field : undefined)
}

/** The value the field names in the params (a dotted path of members), or null when it names none. */
export function fieldValue(params: unknown, field: string | undefined): unknown {
  if (field === undefined) return null
  let at = params
  for (const key of field.split('.')) {
    if (typeof at !== 'object' || at === null || !Object.hasOwn(at, key)) return null
    at = (at as Record<string, unknown>)[key]
  }
  return at ?? null
}

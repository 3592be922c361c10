// One request to the service with fetch (undici). Bodies are kept as the text the service sent, for
// --json, and parsed with lossless-json, so an integer of any size keeps every digit.
import { parse } from 'lossless-json'
import { VERSION } from '../version.js'

/** The service could not be reached, or the connection broke before an answer (exit 3). */
export class ConnectionError extends Error {}

export interface Answer {
  status: number
  headers: Headers
  /** The body exactly as sent. */
  text: string
  /** The body parsed (numbers as LosslessNumber), or undefined when it is not JSON. */
  body: unknown
}

export interface Target {
  url: string
  apiKey: string | null
}

export async function request(
  target: Target,
  method: 'GET' | 'POST',
  path: string,
  options: { body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers = headersFor(target, 'application/json', options.headers)
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  let response: Response
  let text: string
  try {
    response = await fetch(`${target.url}${path}`, { method, headers, body: options.body })
    text = await response.text()
  } catch (error) {
    throw new ConnectionError(`cannot reach ${target.url}: ${reason(error)}`)
  }
  return answerOf(response, text)
}

/** An answer from its response and the text of its body (read losslessly when it is JSON). */
export function answerOf(response: Response, text: string): Answer {
  let body: unknown
  try {
    body = parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, text, body }
}

function headersFor(
  target: Target,
  accept: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  const headers: Record<string, string> = {
    accept,
    'user-agent': `algoserve-cli/${VERSION}`,
    ...extra,
  }
  if (target.apiKey !== null) headers.authorization = `Bearer ${target.apiKey}`
  return headers
}

/**
 * A GET whose body is read as it comes (a text/event-stream): the response once its head has arrived.
 * Aborted by `signal`, it rejects with the signal's reason; unreachable, with a ConnectionError.
 */
export async function openStream(
  target: Target,
  path: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Response> {
  try {
    return await fetch(`${target.url}${path}`, {
      headers: headersFor(target, 'text/event-stream', headers),
      signal,
    })
  } catch (error) {
    if (signal.aborted) throw error
    throw new ConnectionError(`cannot reach ${target.url}: ${reason(error)}`)
  }
}

/** fetch says only "fetch failed"; the cause names what happened (ECONNREFUSED, ENOTFOUND, ...). */
function reason(error: unknown): string {
  const cause =
    error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined
  if (cause?.code !== undefined) return cause.code
  if (cause?.message !== undefined) return cause.message
  return error instanceof Error ? error.message : String(error)
}

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
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': `algoserve-cli/${VERSION}`,
    ...options.headers,
  }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  if (target.apiKey !== null) headers.authorization = `Bearer ${target.apiKey}`
  let response: Response
  let text: string
  try {
    response = await fetch(`${target.url}${path}`, { method, headers, body: options.body })
    text = await response.text()
  } catch (error) {
    throw new ConnectionError(`cannot reach ${target.url}: ${reason(error)}`)
  }
  let body: unknown
  try {
    body = parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, text, body }
}

/** fetch says only "fetch failed"; the cause names what happened (ECONNREFUSED, ENOTFOUND, ...). */
function reason(error: unknown): string {
  const cause =
    error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined
  if (cause?.code !== undefined) return cause.code
  if (cause?.message !== undefined) return cause.message
  return error instanceof Error ? error.message : String(error)
}

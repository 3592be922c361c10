// Talking to the service: its JSON API with the API key the user gave (kept in sessionStorage), and its
// errors as messages.
import { parse } from './format.js'
import { askForKey } from './messages.js'

export const KEY_STORAGE = 'algoserve-api-key'

class HttpError extends Error {
  constructor(status, body, text) {
    super(describeError(status, body, text))
    this.status = status
  }
}

function describeError(status, body, text) {
  const detail = body && typeof body === 'object' ? body.detail : undefined
  const error = detail && typeof detail === 'object' && !Array.isArray(detail) ? detail : body
  if (error && typeof error === 'object' && 'error' in error)
    return `${status} ${error.error}: ${error.message}`
  if (Array.isArray(detail))
    return `${status} ${detail.map((p) => `${(p.loc || []).join('.')}: ${p.msg}`).join('; ')}`
  if (typeof detail === 'string') return `${status} ${detail}`
  return `${status} ${String(text).slice(0, 200)}`
}

export const apiKey = () => sessionStorage.getItem(KEY_STORAGE)

export function headersFor(accept) {
  const headers = { accept }
  const key = apiKey()
  if (key) headers.authorization = `Bearer ${key}`
  return headers
}

export async function api(method, path) {
  const key = apiKey()
  const headers = headersFor('application/json')
  const response = await fetch(path, { method, headers, cache: 'no-store' })
  const text = await response.text()
  let body
  try {
    body = parse(text)
  } catch {
    body = undefined
  }
  if (!response.ok) {
    if (response.status === 401)
      askForKey(key ? 'The API key was not accepted.' : 'This service needs an API key.')
    throw new HttpError(response.status, body, text)
  }
  return body
}

export const jobPath = (id) => `/jobs/${encodeURIComponent(id)}`

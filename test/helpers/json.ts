import { parse } from 'lossless-json'

/** Parses JSON keeping every integer exact (as a bigint) and other numbers as numbers. */
export function parseExact(text: string): unknown {
  return parse(text, null, (value) => (/^-?[0-9]+$/.test(value) ? BigInt(value) : Number(value)))
}

/** The members tests read of an answer's body (integers as BigInt). */
export interface ExactBody {
  result?: Record<string, unknown>
  metadata?: { algorithm?: string; version?: string }
  error?: string
  message?: string
  detail?: { loc: unknown[] }[]
  job_id?: string
  status?: string
}

/** POSTs a JSON text; the answer's body read with every integer exact. */
export async function postExact(url: string, body: string) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  const text = await response.text()
  return { status: response.status, text, json: parseExact(text) as ExactBody }
}

// Formatting for a person: times, durations, numbers and results as text. JSON is read and written
// with lossless-json (the global LosslessJSON its browser build defines), so no digit is lost.

const { parse, stringify, isLosslessNumber } = globalThis.LosslessJSON
const PRIME_CHECKER = 'PrimeChecker'

// Parsing and writing JSON, for the modules that read the service's answers.
export { parse, stringify }

export const text = (value) => (value === null || value === undefined ? '—' : String(value))
export const ms = (iso) => (iso ? Date.parse(iso) : null)
/** "2026-11-23 19:20:01" (UTC) from the service's ISO time. */
export const time = (iso) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) : '—')
export function duration(seconds) {
  if (seconds === null || !Number.isFinite(seconds)) return '—'
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`
  if (seconds < 120) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`
  return `${(seconds / 60).toFixed(1)} min`
}
export const took = (job) => {
  const start = ms(job.created_at)
  const end = ms(job.completed_at)
  return start !== null && end !== null ? (end - start) / 1000 : null
}
/** A long number cut for a table cell; the job's detail shows it whole. */
function shortNumber(value) {
  const digits = text(value)
  return digits.length > 20 ? `${digits.slice(0, 10)}…(${digits.replace('-', '').length} digits)` : digits
}
export const isPrimeChecker = (job) => job.algorithm === PRIME_CHECKER
const numberOf = (job) =>
  isPrimeChecker(job) && job.result && typeof job.result === 'object' ? job.result.number : undefined
export const isScalar = (value) => value === null || typeof value !== 'object' || isLosslessNumber(value)
export const isRecord = (value) => !isScalar(value) && !Array.isArray(value)

/** A value on one line: scalars as they are, a list of scalars comma-separated, the rest as JSON. */
export function inline(value) {
  if (isScalar(value)) return text(value)
  if (Array.isArray(value) && value.every(isScalar)) return value.map(text).join(', ')
  return stringify(value)
}

/** A result in a table cell: PrimeChecker's number; any other result's members on one line, cut. */
export function resultSummary(job) {
  if (job.result === null || job.result === undefined) return '—'
  if (isPrimeChecker(job)) return shortNumber(numberOf(job))
  const line = isRecord(job.result)
    ? Object.entries(job.result)
        .map(([key, value]) => `${key}: ${inline(value)}`)
        .join(', ')
    : inline(job.result)
  return line.length > 60 ? `${line.slice(0, 59)}…` : line
}

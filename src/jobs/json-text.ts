// The contract's values as JSON text, written by hand where a body is built as a string (a job, its
// webhook payload, its deliveries): strings, and times in ISO 8601.

/** ISO 8601 in UTC with an explicit +00:00 offset and milliseconds (docs/api.md). */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '+00:00')
}

/** A string as a JSON member's value. */
export const jsonText = (value: string | null): string => JSON.stringify(value)

/** A time as a JSON member's value: its ISO text, or null. */
export const jsonTime = (ms: number | null): string => (ms === null ? 'null' : JSON.stringify(isoTime(ms)))

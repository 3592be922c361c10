// JSON read with the engine's own parser and still exact: integers a double cannot hold become BigInts, as
// lossless-json's parse makes them, at the engine's speed and memory. lossless-json builds each string a
// character at a time, which for a 15 MB line took seconds and a gigabyte; this is what the output thread
// reads long lines with.
import { isInteger, isSafeNumber, stringify } from 'lossless-json'

/** Digits a safe integer never exceeds (2^53 has 16): shorter literals are read as numbers. */
const SAFE_DIGITS = 15

const isNumberChar = (code: number) =>
  (code >= 0x30 && code <= 0x39) ||
  code === 0x2e ||
  code === 0x2b ||
  code === 0x2d ||
  code === 0x65 ||
  code === 0x45

/** Where the integer literals past a double are, outside strings: start and end, one after the other. */
function bigLiterals(text: string): number[] {
  const found: number[] = []
  let i = 0
  while (i < text.length) {
    const code = text.charCodeAt(i)
    if (code === 0x22) {
      // A string: to its closing quote, one not escaped by an odd run of backslashes.
      for (let quote = text.indexOf('"', i + 1); ; quote = text.indexOf('"', quote + 1)) {
        if (quote === -1) return found // Unterminated: JSON.parse says so.
        let backslashes = 0
        while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++
        if (backslashes % 2 === 0) {
          i = quote + 1
          break
        }
      }
    } else if (code === 0x2d || (code >= 0x30 && code <= 0x39)) {
      const start = i
      while (i < text.length && isNumberChar(text.charCodeAt(i))) i++
      const literal = text.slice(start, i)
      if (i - start > SAFE_DIGITS && isInteger(literal) && !isSafeNumber(literal)) found.push(start, i)
    } else {
      i++
    }
  }
  return found
}

/** A marker no string of `text` can hold: a string holding it would hold its name, which `text` does not. */
function markerFor(text: string): string {
  let name = 'exact-integer'
  while (text.includes(name)) name += '-'
  return `\u0000${name}:`
}

/** Parses JSON; integers past a double come as BigInts, and `hasBigInts` says whether any did. */
export function parseExact(text: string): { value: unknown; hasBigInts: boolean } {
  const found = bigLiterals(text)
  if (found.length === 0) return { value: JSON.parse(text), hasBigInts: false }
  // Each such literal is given to JSON.parse as a marked string, and made a BigInt by the reviver.
  const marker = markerFor(text)
  const quoted = JSON.stringify(marker).slice(0, -1)
  const parts: string[] = []
  let from = 0
  for (let k = 0; k < found.length; k += 2) {
    const start = found[k] as number
    const end = found[k + 1] as number
    parts.push(text.slice(from, start), quoted, text.slice(start, end), '"')
    from = end
  }
  parts.push(text.slice(from))
  const value = JSON.parse(parts.join(''), (_key, member: unknown) =>
    typeof member === 'string' && member.startsWith(marker) ? BigInt(member.slice(marker.length)) : member,
  )
  return { value, hasBigInts: true }
}

/**
 * Writes JSON with the engine's writer, and lossless-json's where a BigInt needs its digits written:
 * when `hasBigInts` says so, or when the engine's writer meets one. Undefined for a value JSON has no text
 * for (undefined, a function).
 */
export function stringifyExact(value: unknown, hasBigInts = false): string | undefined {
  if (hasBigInts) return stringify(value)
  try {
    return JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof TypeError) || !/BigInt/.test(error.message)) throw error
    return stringify(value)
  }
}

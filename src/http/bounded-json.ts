// A JSON parser whose work is bounded before it is spent: no recursion (nesting costs an array entry,
// not a stack frame), at most `maxDepth` levels and `maxValues` values, each counted as it is met, and
// strings (keys too) of at most `maxStringLength` characters between their quotes, escapes counted as
// written, so a hostile body is refused after a scan of its first bytes that break a limit. Numbers stay text
// (LosslessNumber), so big integers keep their digits; strings are cut out of the text and only those
// with escapes go through the engine's JSON.parse. Errors carry Python's json messages and a character
// offset, which FastAPI reports as `json_invalid` (docs/api.md, errors).
import { LosslessNumber } from 'lossless-json'

export interface JsonLimits {
  maxDepth: number
  maxValues: number
  /** The most characters (UTF-16 code units) between a string's quotes, as the body writes them. */
  maxStringLength: number
}

/** What a parse met, filled in as it goes: the values, the deepest nesting level, the longest string. */
export interface JsonStats {
  values: number
  depth: number
  longestString: number
}

/** Why the text was refused, and the character offset where that was found. */
export class JsonRefusal extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message)
  }
}

export const TOO_DEEP = 'nesting is too deep'
export const TOO_MANY_VALUES = 'too many values'
export const TOO_LONG_STRING = 'a string is too long'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const MINUS = 0x2d
const PLUS = 0x2b
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39

/** An open array or object, with the key whose value comes next (objects). */
interface Frame {
  container: unknown[] | Record<string, unknown>
  key: string | null
}

/** Parses `text` whole, at once; `stats`, when given, gets what it met. */
export function parseBoundedJson(text: string, limits: JsonLimits, stats?: JsonStats): unknown {
  const parser = new BoundedJsonParser(text, limits)
  parser.step(Number.POSITIVE_INFINITY)
  if (stats !== undefined) parser.measure(stats)
  return parser.result
}

/**
 * Parses `text` a slice of about `sliceChars` characters at a time, letting the event loop run between
 * slices, so that a large body never holds the loop for its whole parse.
 */
export async function parseBoundedJsonInSlices(
  text: string,
  limits: JsonLimits,
  sliceChars: number,
  stats?: JsonStats,
): Promise<unknown> {
  const parser = new BoundedJsonParser(text, limits)
  while (!parser.step(sliceChars)) await new Promise((resolve) => setImmediate(resolve))
  if (stats !== undefined) parser.measure(stats)
  return parser.result
}

/** The parse as a loop that can stop between values and go on later, its state kept in fields. */
class BoundedJsonParser {
  readonly #text: string
  readonly #limits: JsonLimits
  #i: number
  #values = 0
  #deepest = 0
  #longestString = 0
  readonly #stack: Frame[] = []
  #root: unknown
  #done = false

  constructor(text: string, limits: JsonLimits) {
    this.#text = text
    this.#limits = limits
    this.#i = skipSpace(text, 0)
  }

  get result(): unknown {
    return this.#root
  }

  measure(stats: JsonStats): void {
    stats.values = this.#values
    stats.depth = this.#deepest
    stats.longestString = this.#longestString
  }

  /** Parses on until about `maxChars` more characters are read; answers whether the parse is over. */
  step(maxChars: number): boolean {
    if (this.#done) return true
    const text = this.#text
    const limits = this.#limits
    const stack = this.#stack
    let i = this.#i
    const pauseAt = i + maxChars
    for (;;) {
      // Here a value is expected.
      if (i >= pauseAt) {
        this.#i = i
        return false
      }
      if (++this.#values > limits.maxValues) throw new JsonRefusal(TOO_MANY_VALUES, i)
      const code = text.charCodeAt(i)
      let value: unknown
      let opened: Frame | null = null
      if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
        if (stack.length >= limits.maxDepth) throw new JsonRefusal(TOO_DEEP, i)
        if (stack.length >= this.#deepest) this.#deepest = stack.length + 1
        i = skipSpace(text, i + 1)
        if (code === OPEN_ARRAY) {
          value = []
          if (text.charCodeAt(i) === CLOSE_ARRAY) i++
          else opened = { container: value as unknown[], key: null }
        } else {
          value = {}
          if (text.charCodeAt(i) === CLOSE_OBJECT) i++
          else {
            opened = { container: value as Record<string, unknown>, key: null }
            i = this.#readKey(i, opened)
          }
        }
      } else if (code === QUOTE) {
        const end = this.#stringEnd(i)
        value = stringValue(text, i, end)
        i = end
      } else if (code === MINUS || (code >= ZERO && code <= NINE)) {
        const end = numberEnd(text, i)
        value = new LosslessNumber(text.slice(i, end))
        i = end
      } else if (text.startsWith('true', i)) {
        value = true
        i += 4
      } else if (text.startsWith('false', i)) {
        value = false
        i += 5
      } else if (text.startsWith('null', i)) {
        value = null
        i += 4
      } else {
        throw new JsonRefusal('Expecting value', i)
      }

      if (stack.length === 0) this.#root = value
      else place(stack[stack.length - 1] as Frame, value)
      if (opened !== null) {
        stack.push(opened)
        continue
      }

      // After a value: a comma and the next one, or the ends of the containers it closes.
      for (;;) {
        i = skipSpace(text, i)
        const frame = stack[stack.length - 1]
        if (frame === undefined) {
          if (i < text.length) throw new JsonRefusal('Extra data', i)
          this.#done = true
          return true
        }
        const code = text.charCodeAt(i)
        const isArray = Array.isArray(frame.container)
        if (code === COMMA) {
          i = skipSpace(text, i + 1)
          if (!isArray) i = this.#readKey(i, frame)
          break
        }
        if (code === (isArray ? CLOSE_ARRAY : CLOSE_OBJECT)) {
          stack.pop()
          i++
          continue
        }
        throw new JsonRefusal("Expecting ',' delimiter", i)
      }
    }
  }

  /** Reads `"key" :` at `i` into the frame; returns the offset of the value after it. */
  #readKey(i: number, frame: Frame): number {
    const text = this.#text
    if (text.charCodeAt(i) !== QUOTE) {
      throw new JsonRefusal('Expecting property name enclosed in double quotes', i)
    }
    const end = this.#stringEnd(i)
    frame.key = stringValue(text, i, end)
    const colon = skipSpace(text, end)
    if (text.charCodeAt(colon) !== COLON) throw new JsonRefusal("Expecting ':' delimiter", colon)
    return skipSpace(text, colon + 1)
  }

  /** The end of the string that opens at `start`, refused at `start` when its text is too long. */
  #stringEnd(start: number): number {
    const end = stringEnd(this.#text, start, start + 1 + this.#limits.maxStringLength)
    const length = end - start - 2
    if (length > this.#longestString) this.#longestString = length
    return end
  }
}

function place(frame: Frame, value: unknown): void {
  if (Array.isArray(frame.container)) {
    frame.container.push(value)
  } else {
    const key = frame.key as string
    // A plain assignment to "__proto__" would set the prototype; the key is data like any other.
    if (key === '__proto__') {
      Object.defineProperty(frame.container, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      })
    } else {
      frame.container[key] = value
    }
  }
}

const SPACE = /[ \n\r\t]*/y

function skipSpace(text: string, i: number): number {
  // Mostly no space or one: looked at directly; a run of it is left to the regular expression.
  const code = text.charCodeAt(i)
  if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return i
  SPACE.lastIndex = i + 1
  SPACE.test(text)
  return SPACE.lastIndex
}

// The characters that end a run of plain string content; the engine's regular expression finds the
// next one faster than a loop over the characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids raw control characters in strings.
const STRING_SPECIAL = /["\\\x00-\x1f]/g
const NOT_DIGIT = /[^0-9]/g

/**
 * The offset just past the closing quote of the string that opens at `start`; one whose closing quote
 * would come after `lastQuote` is refused as too long, at its opening quote.
 */
function stringEnd(text: string, start: number, lastQuote: number): number {
  STRING_SPECIAL.lastIndex = start + 1
  if (STRING_SPECIAL.exec(text) === null) {
    if (text.length > lastQuote) throw new JsonRefusal(TOO_LONG_STRING, start)
    throw new JsonRefusal('Unterminated string starting at', start)
  }
  let i = STRING_SPECIAL.lastIndex - 1
  // Past the first escape, a loop: one search per escape costs more than a look at each character.
  for (;;) {
    if (i > lastQuote) throw new JsonRefusal(TOO_LONG_STRING, start)
    const code = text.charCodeAt(i)
    if (code === QUOTE) return i + 1
    if (code === BACKSLASH) i += 2
    else if (code >= 0x20) i++
    else if (Number.isNaN(code)) throw new JsonRefusal('Unterminated string starting at', start)
    else throw new JsonRefusal('Invalid control character at', i)
  }
}

function stringValue(text: string, start: number, end: number): string {
  const inner = text.slice(start + 1, end - 1)
  if (!inner.includes('\\')) return inner
  try {
    return JSON.parse(text.slice(start, end)) as string
  } catch {
    throw new JsonRefusal('Invalid \\escape', start + 1 + inner.indexOf('\\'))
  }
}

/** The offset just past the number at `start`, after JSON's grammar: -?int frac? exp? */
function numberEnd(text: string, start: number): number {
  let i = start
  if (text.charCodeAt(i) === MINUS) i++
  if (text.charCodeAt(i) === ZERO) i++
  else i = digits(text, i, start)
  if (text.charCodeAt(i) === DOT) i = digits(text, i + 1, start)
  const code = text.charCodeAt(i)
  if (code === 0x65 || code === 0x45) {
    i++
    const sign = text.charCodeAt(i)
    if (sign === PLUS || sign === MINUS) i++
    i = digits(text, i, start)
  }
  return i
}

/** One or more digits from `i`; a number without them is no value at all, as Python reads it. */
function digits(text: string, i: number, start: number): number {
  NOT_DIGIT.lastIndex = i
  const end = NOT_DIGIT.exec(text) === null ? text.length : NOT_DIGIT.lastIndex - 1
  if (end === i) throw new JsonRefusal('Expecting value', start)
  return end
}

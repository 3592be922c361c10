// Integers of any size as clients send them: a JSON number literal (kept as text by the lossless
// parser), or a string of decimal digits. The text is read without converting it, so its size is known
// before any BigInt is made: a megabyte of digits costs a scan, not a quadratic conversion.
import { isLosslessNumber } from 'lossless-json'
import { InputRuleError, PROBLEM_MESSAGES } from '../errors.js'

export type IntegerProblem = 'int_type' | 'int_parsing' | 'int_from_float'

/** An integer as text: its value is (negative ? -1 : 1) * digits * 10^zeros; digits has no leading zero. */
export interface IntegerText {
  negative: boolean
  digits: string
  zeros: number
}

const DIGIT_STRING = /^-?[0-9]+$/
// A JSON number: the lossless parser has already checked its grammar.
const NUMBER_PARTS = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/

/** Reads an integer input, or names the schema problem (pydantic v2 lax int rules). */
export function readIntegerInput(value: unknown): IntegerText | IntegerProblem {
  if (typeof value === 'string') return DIGIT_STRING.test(value) ? readDigits(value) : 'int_parsing'
  // Most literals are plain integers; only the others need the decimal point and exponent worked out.
  if (isLosslessNumber(value))
    return DIGIT_STRING.test(value.value) ? readDigits(value.value) : readNumberLiteral(value.value)
  if (typeof value === 'number') return Number.isFinite(value) ? readNumberLiteral(String(value)) : 'int_type'
  if (typeof value === 'bigint') {
    const text = value.toString()
    return { negative: value < 0n, digits: value < 0n ? text.slice(1) : text, zeros: 0 }
  }
  return 'int_type'
}

function readDigits(text: string): IntegerText {
  const negative = text.charCodeAt(0) === 45
  return { negative, digits: stripLeadingZeros(negative ? text.slice(1) : text), zeros: 0 }
}

function readNumberLiteral(text: string): IntegerText | IntegerProblem {
  const parts = NUMBER_PARTS.exec(text)
  if (parts === null) return 'int_parsing'
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = parts
  const digits = stripLeadingZeros(whole + fraction)
  if (digits === '') return { negative: false, digits: '', zeros: 0 }
  // value = significant * 10^zeros; a negative power means a fractional part.
  const significant = stripTrailingZeros(digits)
  const zeros = Number(exponentText) - fraction.length + (digits.length - significant.length)
  if (zeros < 0) return 'int_from_float'
  return { negative: sign === '-', digits: significant, zeros }
}

// Loops, not /0+$/: on a long run of zeros followed by another digit that regex backtracks
// quadratically (200,000 zeros took 15 s).
function stripLeadingZeros(digits: string): string {
  let i = 0
  while (i < digits.length && digits.charCodeAt(i) === 48) i++
  return digits.slice(i)
}

function stripTrailingZeros(digits: string): string {
  let end = digits.length
  while (end > 0 && digits.charCodeAt(end - 1) === 48) end--
  return digits.slice(0, end)
}

/** Decimal digits of the value (0 has one), without making it. */
export function digitCount(text: IntegerText): number {
  return text.digits === '' ? 1 : text.digits.length + text.zeros
}

export function toBigInt(text: IntegerText): bigint {
  if (text.digits === '') return 0n
  const magnitude = BigInt(text.digits + '0'.repeat(text.zeros))
  return text.negative ? -magnitude : magnitude
}

/**
 * An algorithm parameter that must be an integer of at most `maxDigits` digits: the value, or a 400
 * InputRuleError naming `field` (and, when given, how to raise the bound).
 */
export function integerParam(value: unknown, field: string, maxDigits: number, howToRaise?: string): bigint {
  const text = readIntegerInput(value)
  if (typeof text === 'string') {
    throw new InputRuleError(`${field}: ${PROBLEM_MESSAGES[text]}.`, field, value)
  }
  const digits = digitCount(text)
  if (digits > maxDigits) {
    throw new InputRuleError(
      howToRaise === undefined
        ? `${field} has ${digits} digits; at most ${maxDigits} are allowed.`
        : `${field} has ${digits} digits; at most ${maxDigits} are allowed (maxDigits): ${howToRaise}.`,
      field,
      `${text.negative ? '-' : ''}${text.digits}${text.zeros > 0 ? `e${text.zeros}` : ''}`,
    )
  }
  return toBigInt(text)
}

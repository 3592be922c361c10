import { parse } from 'lossless-json'

/** Parses JSON keeping every integer exact (as a bigint) and other numbers as numbers. */
export function parseExact(text: string): unknown {
  return parse(text, null, (value) => (/^-?[0-9]+$/.test(value) ? BigInt(value) : Number(value)))
}

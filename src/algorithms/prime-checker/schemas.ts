// PrimeChecker's params and result as JSON Schema (TypeBox): what the params schema check, the OpenAPI
// document and GET /algorithms/PrimeChecker show.
import { Type } from '@sinclair/typebox'

/** An integer of any size in a result: always a JSON integer literal, exact. */
const BigInteger = Type.Unsafe<bigint>({ type: 'integer', description: 'Exact, of any size.' })

export const PrimeParamsSchema = Type.Object(
  {
    number: Type.Union([Type.Integer(), Type.String({ pattern: '^-?[0-9]+$' })], {
      description:
        'An integer of any sign and size: a JSON integer literal (read exactly, never through a double), ' +
        'a float with no fractional part such as 7.0 or 1e3, or a string of decimal digits. ' +
        'At most ALGOSERVE_MAX_DIGITS (default 4300) digits, otherwise 400 VALIDATION_ERROR.',
    }),
  },
  { description: 'The integer to test and factor.' },
)

export const PrimeResultSchema = Type.Object(
  {
    number: BigInteger,
    is_prime: Type.Boolean({
      description:
        'Exact below 2^64 (deterministic test); Baillie-PSW above. 0, 1 and negatives are not prime.',
    }),
    factors: Type.Array(BigInteger, {
      description:
        'Prime factorisation with multiplicity, ascending; a negative number starts with -1. Empty for primes, ' +
        '0 and 1. When factorization_complete is false it ends with the composite part(s) left unsplit; the ' +
        'product is always the number.',
    }),
    factorization_complete: Type.Boolean({
      description: 'False when the factorisation time budget ran out before every part was split.',
    }),
    // An enum, not a union of literals: fast-json-stringify writes an enum directly, while a union
    // makes it validate the value against each branch first.
    algorithm: Type.Unsafe<'trial_division' | 'deterministic_miller_rabin' | 'baillie_psw'>({
      type: 'string',
      enum: ['trial_division', 'deterministic_miller_rabin', 'baillie_psw'],
      description:
        'Primality method, chosen by |number|: trial_division below 2^32, deterministic_miller_rabin ' +
        'below 2^64 (the deterministic 64-bit test: a base-2 strong probable-prime test plus a strong Lucas ' +
        'test), baillie_psw from 2^64 on.',
    }),
  },
  { $id: 'PrimeResult', description: "PrimeChecker's result." },
)

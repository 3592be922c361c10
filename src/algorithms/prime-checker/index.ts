// PrimeChecker: is an integer prime, and what are its prime factors (docs/prime-checker.md).

import { VERSION } from '../../version.js'
import { type BuiltInModule, INLINE, type ParamLimits, type RunContext, SERVICE_NOTES } from '../algorithm.js'
import { integerParam } from '../integer-input.js'
import { abs } from './bigint-math.js'
import { factorize } from './factorize.js'
import { LIMIT_64 } from './kernel.js'
import { isPrime, type PrimalityMethod, primalityMethod } from './primality.js'
import { PrimeParamsSchema, PrimeResultSchema } from './schemas.js'
import { LIMIT_32 } from './small.js'
import { trialDivide } from './trial-division.js'

export interface PrimeParams {
  number: bigint
}

export interface PrimeResult {
  number: bigint
  is_prime: boolean
  factors: bigint[]
  factorization_complete: boolean
  algorithm: PrimalityMethod
}

/**
 * What run needs of its context: the budget, a signal it checks between steps and where the factorisation
 * reports its progress, when there are.
 */
interface PrimeRunContext {
  budgetMs: number
  signal?: AbortSignal
  progress?: RunContext['progress']
}

function run({ number }: PrimeParams, { budgetMs, signal, progress }: PrimeRunContext): PrimeResult {
  const deadline = performance.now() + budgetMs
  const algorithm = primalityMethod(number)
  const prime = isPrime(number)
  const magnitude = abs(number)
  let factors: bigint[] = []
  let complete = true
  if (!prime && magnitude > 1n) {
    // Only a positive number that is not prime is known to be composite: -p is not prime, p is.
    const factorization = factorize(magnitude, { deadline, signal, composite: number > 0n, progress })
    factors = factorization.factors
    complete = factorization.complete
  }
  if (number < 0n) factors.unshift(-1n)
  return { number, is_prime: prime, factors, factorization_complete: complete, algorithm }
}

export const primeChecker = {
  name: 'PrimeChecker',
  version: VERSION,
  description:
    'Tests an integer of any size for primality and factors it; the factorisation stops at its time ' +
    'budget with factorization_complete false.',
  params: PrimeParamsSchema,
  result: PrimeResultSchema,
  examples: [{ params: { number: 97 } }, { params: { number: '18446744073709551617' } }],
  run,

  [SERVICE_NOTES]: {
    intro: 'PrimeChecker tests an integer of any size for primality and factors it.',
    notes: `* Numbers are read exactly: JSON integer literals of any length, or strings of decimal digits. Responses
  write them as exact JSON integers; a JavaScript client reads those above 2^53 with a lossless parser
  (docs/api.md, "JavaScript clients").
* The primality method depends on |number|: trial division below 2^32, deterministic Miller-Rabin below 2^64,
  Baillie-PSW above.
`,
  },

  [INLINE]: {
    parseParams(raw: Record<string, unknown>, limits: ParamLimits, fieldPrefix: string): PrimeParams {
      return { number: integerParam(raw.number, `${fieldPrefix}number`, limits.maxDigits, limits.howToRaise) }
    },

    // Below 2^32 both the test and the factorisation are trial division by primes under 2^16.
    isCheap({ number }: PrimeParams): boolean {
      return number > -LIMIT_32 && number < LIMIT_32
    },

    // Below 2^64 the kernel's primality test and its trial division by the primes below 2^16 take
    // microseconds. What they leave is 1, or a prime, or a composite whose factors all exceed 2^16 (a
    // balanced semiprime, say): only that one needs rho, which goes to a worker thread.
    runIfCheap({ number }: PrimeParams): PrimeResult | undefined {
      const magnitude = abs(number)
      if (magnitude >= LIMIT_64) return undefined
      const algorithm = primalityMethod(number)
      if (isPrime(number))
        return { number, is_prime: true, factors: [], factorization_complete: true, algorithm }
      if (magnitude < 2n) return run({ number }, { budgetMs: 0 })
      const { primes, rest } = trialDivide(magnitude)
      // Every factor of rest exceeds 2^16, so below 2^32 it is prime.
      if (rest !== 1n && rest >= LIMIT_32 && !isPrime(rest)) return undefined
      const factors = rest === 1n ? primes : [...primes, rest]
      if (number < 0n) factors.unshift(-1n)
      return { number, is_prime: false, factors, factorization_complete: true, algorithm }
    },
  },
} satisfies BuiltInModule<PrimeParams, PrimeResult>

export default primeChecker

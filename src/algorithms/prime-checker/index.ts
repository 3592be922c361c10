// PrimeChecker: is an integer prime, and what are its prime factors (decisions.md, The prime result).

import { VERSION } from '../../version.js'
import type { Algorithm, ParamLimits, RunOptions } from '../algorithm.js'
import { integerParam } from '../integer-input.js'
import { abs } from './bigint-math.js'
import { factorize } from './factorize.js'
import { isPrime, type PrimalityMethod, primalityMethod } from './primality.js'
import { LIMIT_32 } from './small.js'

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

export const primeChecker: Algorithm<PrimeParams, PrimeResult> = {
  name: 'PrimeChecker',
  version: VERSION,

  parseParams(raw: Record<string, unknown>, limits: ParamLimits, fieldPrefix: string): PrimeParams {
    return { number: integerParam(raw.number, `${fieldPrefix}number`, limits.maxDigits) }
  },

  // Below 2^32 both the test and the factorisation are trial division by primes under 2^16.
  isCheap({ number }: PrimeParams): boolean {
    return number > -LIMIT_32 && number < LIMIT_32
  },

  run({ number }: PrimeParams, { budgetMs, signal }: RunOptions): PrimeResult {
    const deadline = performance.now() + budgetMs
    const algorithm = primalityMethod(number)
    const prime = isPrime(number)
    const magnitude = abs(number)
    let factors: bigint[] = []
    let complete = true
    if (!prime && magnitude > 1n) {
      const factorization = factorize(magnitude, { deadline, signal, composite: true })
      factors = factorization.factors
      complete = factorization.complete
    }
    if (number < 0n) factors.unshift(-1n)
    return { number, is_prime: prime, factors, factorization_complete: complete, algorithm }
  },
}

/** Trial division below this bound is exact for every number below SMALL_PRIME_LIMIT ** 2 = 2^32. */
export const SMALL_PRIME_LIMIT = 65536

/** All primes below SMALL_PRIME_LIMIT, ascending (6542 of them), sieved once at module load. */
export const SMALL_PRIMES: Uint32Array = sieve(SMALL_PRIME_LIMIT)

function sieve(limit: number): Uint32Array {
  const composite = new Uint8Array(limit)
  for (let i = 2; i * i < limit; i++) {
    if (composite[i]) continue
    // Smaller multiples of i were already crossed out by smaller primes.
    for (let j = i * i; j < limit; j += i) composite[j] = 1
  }
  const primes: number[] = []
  for (let i = 2; i < limit; i++) if (!composite[i]) primes.push(i)
  return Uint32Array.from(primes)
}

// Numbers several tests share.

/** RSA-100: no factor is found within any budget used in tests, so its run lasts the whole budget. */
export const RSA_100 =
  '1522605027922533360535618378132637429718068114961380688657908494580122963258952897654000350692006139'

/** Primality of a small number by trial division, independent of the code under test. */
export function isPrimeByTrial(n: number): boolean {
  if (n < 2) return false
  for (let d = 2; d * d <= n; d++) if (n % d === 0) return false
  return true
}

// Same-run A/B of factoring balanced 64-bit semiprimes: this checkout's PrimeChecker against another
// checkout's (its path the first argument, with its own kernel built), in one process, CPU time, three rounds
// each, interleaved, on 50 semiprimes from each of six seeds. `npx tsx bench/prime/factor64-ab.ts /tmp/old`;
// DIGITS=20 takes balanced semiprimes of that many digits instead.

import { primeChecker } from '../../src/algorithms/prime-checker/index.js'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { median } from '../lib/stats.js'
import { checkoutArgument, cpuMs, primeCheckerOf } from './other-checkout.js'
import { balancedSemiprime, generator } from './prime-cases.js'

writeResultOnExit(
  'factor64-ab',
  {
    title: "balanced 64-bit semiprimes, another checkout's PrimeChecker side by side",
    script: 'bench/prime/factor64-ab.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/factor64-ab.ts',
  },
  ['DIGITS'],
)

const other = await primeCheckerOf(checkoutArgument('tsx bench/prime/factor64-ab.ts <other checkout>'))

/** Mean CPU ms per number for one pass, checking that each splits into its two primes. */
function time(checker: typeof primeChecker, numbers: bigint[]): number {
  const ms = cpuMs(() => {
    for (const n of numbers) {
      const { factors } = checker.run({ number: n }, { budgetMs: 600_000 }) as { factors: bigint[] }
      if (factors.length !== 2 || (factors[0] ?? 0n) * (factors[1] ?? 0n) !== n)
        throw new Error(`${n} misfactored`)
    }
  })
  return ms / numbers.length
}

const digits = process.env.DIGITS === undefined ? undefined : Number(process.env.DIGITS)
const [lo, hi] =
  digits === undefined ? [1n << 63n, 1n << 64n] : [10n ** BigInt(digits - 1), 10n ** BigInt(digits)]

const ratios: number[] = []
for (let seed = 1; seed <= 6; seed++) {
  const g = generator(seed)
  const numbers = Array.from({ length: 50 }, () => balancedSemiprime(g, lo, hi, isPrime))
  time(primeChecker, numbers)
  time(other, numbers)
  const ours: number[] = []
  const theirs: number[] = []
  for (let round = 0; round < 3; round++) {
    ours.push(time(primeChecker, numbers))
    theirs.push(time(other, numbers))
  }
  const ratio = median(ours) / median(theirs)
  ratios.push(ratio)
  console.log(
    `seed ${seed}: this ${median(ours).toFixed(3)} ms, other ${median(theirs).toFixed(3)} ms, this/other ${ratio.toFixed(2)}`,
  )
}
console.log(`mean this/other ${(ratios.reduce((a, b) => a + b) / ratios.length).toFixed(2)}`)

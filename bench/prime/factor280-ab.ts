// The 280-digit row of bench:prime (a 20-digit prime times a 280-digit prime, built as that row builds it)
// for each BENCH_SEED given, timed once each: this checkout's PrimeChecker, another checkout's (its path the
// first argument, its kernel built) in the same process, and PARI/GP's factor, all CPU time.
// `npx tsx bench/prime/factor280-ab.ts /tmp/old 20261121 1 2 3 4`. Both engines run the same curves in the
// same order, so their ratio is the cost per curve; against PARI each number is mostly the luck of the
// curves.

import { primeChecker } from '../../src/algorithms/prime-checker/index.js'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { checkoutArgument, cpuMs, primeCheckerOf } from './other-checkout.js'
import { gp } from './pari.js'
import { randomPrime, randomPrimeDigits, rowGenerator } from './prime-cases.js'

writeResultOnExit(
  'factor280-ab',
  {
    title: "bench:prime's 280-digit row, another checkout's PrimeChecker side by side",
    script: 'bench/prime/factor280-ab.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/factor280-ab.ts',
  },
  [],
)

const USAGE = 'tsx bench/prime/factor280-ab.ts <other checkout> <BENCH_SEED>...'
const other = await primeCheckerOf(checkoutArgument(USAGE))
const seeds = process.argv.slice(3)
if (seeds.length === 0) throw new Error(`usage: ${USAGE}`)
const ROW = 'factor, a 20-digit prime times a 280-digit prime'

/** CPU seconds of one full run, checking the factorisation. */
function seconds(checker: typeof primeChecker, n: bigint): number {
  let result: ReturnType<typeof checker.run> | undefined
  const ms = cpuMs(() => {
    result = checker.run({ number: n }, { budgetMs: 600_000 })
  })
  if (!result?.factorization_complete || result.factors.reduce((a, b) => a * b, 1n) !== n) {
    throw new Error(`incomplete factorisation of ${n}`)
  }
  return ms / 1000
}

console.log(
  '| BENCH_SEED | 20-digit prime | other s | this s | PARI s | this / other | this / PARI | other / PARI |',
)
console.log('|---|---|---|---|---|---|---|---|')
const total = { other: 0, ours: 0, pari: 0 }
for (const seed of seeds) {
  const g = rowGenerator(Number(seed), ROW)
  const p = randomPrimeDigits(g, 20, isPrime)
  const n = p * randomPrime(g, 10n ** 279n, 10n ** 280n, isPrime)
  const ours = seconds(primeChecker, n)
  const theirs = seconds(other, n)
  const pari = Number(gp(`n=${n};t=getabstime();factor(n);print(getabstime()-t)`)[0]) / 1000
  total.ours += ours
  total.other += theirs
  total.pari += pari
  console.log(
    `| ${seed} | ${p} | ${theirs.toFixed(1)} | ${ours.toFixed(1)} | ${pari.toFixed(1)} | ${(ours / theirs).toFixed(2)} | ${(ours / pari).toFixed(2)}x | ${(theirs / pari).toFixed(2)}x |`,
  )
}
console.log(
  `| total | | ${total.other.toFixed(1)} | ${total.ours.toFixed(1)} | ${total.pari.toFixed(1)} | ${(total.ours / total.other).toFixed(2)} | ${(total.ours / total.pari).toFixed(2)}x | ${(total.other / total.pari).toFixed(2)}x |`,
)

// Same-run A/B of the quadratic sieve: this checkout's quadraticSieve against another checkout's (its path
// the first argument, with its own kernel built), on the same seeded balanced semiprimes, interleaved round
// by round and in alternating order, so that a busy machine slows both alike; CPU ms (other-checkout.ts).
// `npx tsx bench/prime/qs-ab.ts /tmp/old [digits,...]` (default 40,50,60); ROUNDS (default 5), BENCH_SEED.

import { Budget } from '../../src/algorithms/prime-checker/budget.js'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { quadraticSieve } from '../../src/algorithms/prime-checker/quadratic-sieve.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { median } from '../lib/stats.js'
import { checkoutArgument, cpuMs, importFrom } from './other-checkout.js'
import { balancedSemiprime, generator } from './prime-cases.js'

writeResultOnExit(
  'qs-ab',
  {
    title: "the quadratic sieve, another checkout's side by side",
    script: 'bench/prime/qs-ab.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/qs-ab.ts',
  },
  ['BENCH_SEED', 'ROUNDS'],
)

type Sieve = typeof quadraticSieve
const other = checkoutArgument('tsx bench/prime/qs-ab.ts <other checkout> [digits,...]')
const digitsList = (process.argv[3] ?? '40,50,60').split(',').map(Number)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const SEED = Number(process.env.BENCH_SEED ?? 20261121)
/** Inputs per size: a few seconds a side per round at most. */
const COUNT: Record<number, number> = { 30: 20, 40: 10, 50: 4, 60: 1, 70: 1 }

const { quadraticSieve: otherSieve } = await importFrom<{ quadraticSieve: Sieve }>(
  other,
  'src/algorithms/prime-checker/quadratic-sieve.ts',
)

/** Mean CPU ms per input, each input split (a divisor checked). */
function time(sieve: Sieve, numbers: bigint[]): number {
  return (
    cpuMs(() => {
      for (const n of numbers) {
        const d = sieve(n, new Budget(performance.now() + 3_600_000))
        if (d === undefined || d <= 1n || d >= n || n % d !== 0n) throw new Error(`no divisor of ${n}`)
      }
    }) / numbers.length
  )
}

console.log(
  `qs-ab: this checkout (B) against ${other} (A), seed ${SEED}, ${ROUNDS} rounds, Node ${process.version}`,
)
console.log('| digits | inputs | A (other) | B (this) | B / A | per-round B / A |')
console.log('|---|---|---|---|---|---|')
for (const digits of digitsList) {
  const lo = 10n ** BigInt(digits - 1)
  const g = generator(SEED + digits)
  const numbers = Array.from({ length: COUNT[digits] ?? 2 }, () =>
    balancedSemiprime(g, lo, lo * 10n, isPrime),
  )
  // One untimed pass each, so that neither side pays V8's first compiles in its figures.
  time(otherSieve, numbers)
  time(quadraticSieve, numbers)
  const a: number[] = []
  const b: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      a.push(time(otherSieve, numbers))
      b.push(time(quadraticSieve, numbers))
    } else {
      b.push(time(quadraticSieve, numbers))
      a.push(time(otherSieve, numbers))
    }
  }
  const ratios = a.map((x, i) => ((b[i] as number) / x).toFixed(2)).join(' ')
  const ma = median(a)
  const mb = median(b)
  console.log(
    `| ${digits} | ${numbers.length} | ${ma.toFixed(1)} ms | ${mb.toFixed(1)} ms | ${(mb / ma).toFixed(2)} | ${ratios} |`,
  )
}

// Quadratic sieve against rho and ECM on the same balanced semiprimes, for choosing where factorize.ts hands
// parts to the sieve: `npx tsx bench/prime/qs-crossover.ts [digits...]` (build the kernel first,
// npm run build:wasm). Per size: COUNT seeded semiprimes, each split by quadraticSieve, by rhoBig with the
// 8000 steps that precede ECM (their cost, found or not), by rhoBig run until it splits n and by ECM alone,
// both with a cap of CAP_MS (a miss counts as the cap); medians.
import { Budget } from '../../src/algorithms/prime-checker/budget.js'
import { ecm } from '../../src/algorithms/prime-checker/ecm.js'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { quadraticSieve } from '../../src/algorithms/prime-checker/quadratic-sieve.js'
import { rhoBig } from '../../src/algorithms/prime-checker/rho.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { median } from '../lib/stats.js'
import { balancedSemiprime, generator } from './prime-cases.js'

writeResultOnExit(
  'qs-crossover',
  {
    title: 'the quadratic sieve against rho and ECM, by size',
    script: 'bench/prime/qs-crossover.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/qs-crossover.ts',
  },
  ['BENCH_SEED', 'COUNT', 'CAP_MS', 'WARMUP'],
)

const SEED = Number(process.env.BENCH_SEED ?? 20261121)
const COUNT = Number(process.env.COUNT ?? 5)
const CAP_MS = Number(process.env.CAP_MS ?? 8000)
const sizes = process.argv.slice(2).map(Number)

/** The ms that run() takes, or infinity when it finds no divisor; a divisor it finds is checked. */
function time(run: () => bigint | undefined, n: bigint): number {
  const start = performance.now()
  const d = run()
  const ms = performance.now() - start
  if (d !== undefined && (d <= 1n || d >= n || n % d !== 0n)) throw new Error(`bad divisor ${d} of ${n}`)
  return d === undefined ? Number.POSITIVE_INFINITY : ms
}

/** The ms that run() takes, whether or not it finds a divisor (rho's 8000 steps mostly do not). */
function cost(run: () => unknown): number {
  const start = performance.now()
  run()
  return performance.now() - start
}

console.log(
  `## Medians of ${COUNT} balanced semiprimes per size, wall time; rho and ECM capped at ${CAP_MS} ms; seed ${SEED}, Node ${process.version}`,
)
console.log()
console.log('| digits | QS | rho 8000 steps | rho to the factor | ECM |')
console.log('|---|---|---|---|---|')
// Untimed runs of each method on WARMUP numbers of every size listed first: V8 optimises over tens of calls,
// and one warm-up run per size left the first size listed 4 to 6x slower for the sieve than the same numbers
// listed later.
const WARMUP = Number(process.env.WARMUP ?? 10)
const list = sizes.length > 0 ? sizes : [20, 22, 25, 30, 35, 40]
const warm = generator(SEED)
for (let i = 0; i < WARMUP; i++) {
  for (const digits of list) {
    const lo = 10n ** BigInt(digits - 1)
    const n = balancedSemiprime(warm, lo, lo * 10n, isPrime)
    quadraticSieve(n, new Budget(performance.now() + 60_000))
    rhoBig(n, 8000, new Budget(performance.now() + 60_000))
    ecm(n, new Budget(performance.now() + 20))
  }
}
for (const digits of list) {
  const g = generator(SEED + digits)
  const lo = 10n ** BigInt(digits - 1)
  const numbers = Array.from({ length: COUNT }, () => balancedSemiprime(g, lo, lo * 10n, isPrime))
  const qs: number[] = []
  const rho: number[] = []
  const rhoFull: number[] = []
  const curves: number[] = []
  for (const n of numbers) {
    qs.push(time(() => quadraticSieve(n, new Budget(performance.now() + 60_000)), n))
    rho.push(cost(() => rhoBig(n, 8000, new Budget(performance.now() + 60_000))))
    rhoFull.push(
      Math.min(
        CAP_MS,
        time(() => rhoBig(n, Number.MAX_SAFE_INTEGER, new Budget(performance.now() + CAP_MS)), n),
      ),
    )
    curves.push(
      Math.min(
        CAP_MS,
        time(() => ecm(n, new Budget(performance.now() + CAP_MS)), n),
      ),
    )
  }
  const capped = (times: number[]) =>
    median(times) >= CAP_MS ? `>= ${CAP_MS} ms (cap)` : `${median(times).toFixed(2)} ms`
  console.log(
    `| ${digits} | ${median(qs).toFixed(2)} ms | ${median(rho).toFixed(2)} ms | ${capped(rhoFull)} | ${capped(curves)} |`,
  )
}

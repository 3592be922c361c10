// Quadratic sieve against rho and ECM on the same balanced semiprimes, for choosing where factorize.ts hands
// parts to the sieve: `npx tsx bench/prime/qs-crossover.ts [digits...]` (build the kernel first, npm run build:wasm).
// Per size: COUNT seeded semiprimes, each split by quadraticSieve, by rhoBig with the 8000 steps that precede
// ECM (their cost, found or not), and by ECM alone with a cap of CAP_MS (a miss counts as the cap); medians.
import { Budget } from '../../src/algorithms/prime-checker/budget.js'
import { ecm } from '../../src/algorithms/prime-checker/ecm.js'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { quadraticSieve } from '../../src/algorithms/prime-checker/quadratic-sieve.js'
import { rhoBig } from '../../src/algorithms/prime-checker/rho.js'
import { balancedSemiprime, generator } from './prime-cases.js'
import { median } from './stats.js'

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
  `qs-crossover seed ${SEED}, ${COUNT} numbers per size, ECM cap ${CAP_MS} ms, Node ${process.version}`,
)
console.log('| digits | QS | rho 8000 steps | ECM |')
console.log('|---|---|---|---|')
for (const digits of sizes.length > 0 ? sizes : [20, 22, 25, 30, 35, 40]) {
  const g = generator(SEED + digits)
  const lo = 10n ** BigInt(digits - 1)
  const numbers = Array.from({ length: COUNT }, () => balancedSemiprime(g, lo, lo * 10n, isPrime))
  // One untimed run warms V8 and the kernel up.
  quadraticSieve(numbers[0] as bigint, new Budget(performance.now() + 60_000))
  const qs: number[] = []
  const rho: number[] = []
  const curves: number[] = []
  for (const n of numbers) {
    qs.push(time(() => quadraticSieve(n, new Budget(performance.now() + 60_000)), n))
    rho.push(cost(() => rhoBig(n, 8000, new Budget(performance.now() + 60_000))))
    curves.push(
      Math.min(
        CAP_MS,
        time(() => ecm(n, new Budget(performance.now() + CAP_MS)), n),
      ),
    )
  }
  const ecmText = median(curves) >= CAP_MS ? `>= ${CAP_MS} ms (cap)` : `${median(curves).toFixed(2)} ms`
  console.log(`| ${digits} | ${median(qs).toFixed(2)} ms | ${median(rho).toFixed(2)} ms | ${ecmText} |`)
}

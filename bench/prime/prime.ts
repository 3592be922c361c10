// PrimeChecker engine against PARI/GP on the same seeded inputs, in the same run:
// `npm run bench:prime [filter...]` (builds the kernel, then runs this file through tsx);
// `npm run bench:prime -- Baillie-PSW` times only the rows whose name contains an argument. PARI rows are
// skipped, saying so, without `gp`. Each case times every input in a batch, ROUNDS times; the figure is the
// median over rounds of the mean time per input. Both sides count CPU time, as PARI's getabstime does (a gp
// `system("sleep 1")` adds 0 to it): on a shared machine, time lost to other processes counts on neither side
// (ours used to be wall time). PARI confirms every generated number (primality, or two prime factors) before
// timing.
import { spawnSync } from 'node:child_process'
import { primeChecker } from '../../src/algorithms/prime-checker/index.js'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { median } from '../lib/stats.js'
import { gp } from './pari.js'
import {
  balancedSemiprime,
  type Generator,
  randomOdd64,
  randomPrime,
  randomPrimeBits,
  randomPrimeDigits,
  rowGenerator as seededRowGenerator,
} from './prime-cases.js'

writeResultOnExit(
  'prime',
  {
    title: 'the PrimeChecker engine against PARI/GP',
    script: 'bench/prime/prime.ts',
    npm: 'npm run bench:prime',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/prime.ts',
  },
  ['BENCH_SEED', 'ROUNDS'],
)

const SEED = Number(process.env.BENCH_SEED ?? 20261121)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const FACTOR_BUDGET_MS = 600_000

interface Case {
  name: string
  numbers: bigint[]
  /**
   * 'isprime' rows call isPrime and PARI's isprime, 'bpsw' rows ispseudoprime, 'factor' rows a full run and
   * factor.
   */
  kind: 'isprime' | 'bpsw' | 'factor'
  rounds: number
  target: string
}

/** A case whose inputs are generated only when its row is run. */
type LazyCase = Omit<Case, 'numbers'> & { build: () => bigint[] }

const hasGp = spawnSync('gp', ['--version-short']).status === 0

function gpVector(numbers: bigint[]): string {
  return `v=[${numbers.join(',')}];`
}

/**
 * A prime of `digits` digits from a seeded start: PARI's nextprime when gp is here, else the engine's search.
 */
function bigPrime(g: Generator, digits: number): bigint {
  if (!hasGp || digits < 2000) return randomPrimeDigits(g, digits, isPrime)
  const start = g.between(10n ** BigInt(digits - 1), 10n ** BigInt(digits))
  return BigInt(gp(`print(nextprime(${start}))`)[0] as string)
}

/** A row's inputs come from its own generator, seeded by SEED and the row's name, so that a filtered run
 * builds only the rows it times and still gets the same numbers as a full run. */
function rowGenerator(name: string): Generator {
  return seededRowGenerator(SEED, name)
}

function row(
  name: string,
  kind: Case['kind'],
  rounds: number,
  target: string,
  build: (g: Generator) => bigint[],
): LazyCase {
  return { name, kind, rounds, target, build: () => build(rowGenerator(name)) }
}

function cases(): LazyCase[] {
  const list: LazyCase[] = [
    row('is_prime, random 64-bit primes', 'isprime', ROUNDS, '2', (g) =>
      Array.from({ length: 20_000 }, () => randomPrimeBits(g, 64, isPrime)),
    ),
    row('is_prime, random odd 64-bit numbers', 'isprime', ROUNDS, '2', (g) =>
      Array.from({ length: 20_000 }, () => randomOdd64(g)),
    ),
  ]
  for (const [digits, count] of [
    [100, 200],
    [300, 40],
    [1000, 4],
    [3000, 1],
  ] as const) {
    list.push(
      row(`Baillie-PSW, ${digits}-digit primes`, 'bpsw', ROUNDS, '3', (g) =>
        Array.from({ length: count }, () => bigPrime(g, digits)),
      ),
    )
  }
  list.push(
    row('factor, balanced 64-bit semiprimes', 'factor', ROUNDS, '2', (g) =>
      Array.from({ length: 50 }, () => balancedSemiprime(g, 1n << 63n, 1n << 64n, isPrime)),
    ),
  )
  for (const digits of [20, 30]) {
    const lo = 10n ** BigInt(digits - 1)
    list.push(
      row(`factor, balanced ${digits}-digit semiprimes`, 'factor', 3, '5', (g) =>
        Array.from({ length: 20 }, () => balancedSemiprime(g, lo, lo * 10n, isPrime)),
      ),
    )
  }
  // The quadratic sieve's range: fewer numbers and rounds as they grow (PARI takes about 22 s at 70 digits).
  for (const [digits, count, rounds, target] of [
    [40, 10, 3, '1.5'],
    [50, 4, 1, '2'],
    [60, 2, 1, '2'],
    [70, 1, 1, '2'],
  ] as const) {
    const lo = 10n ** BigInt(digits - 1)
    list.push(
      row(`factor, balanced ${digits}-digit semiprimes`, 'factor', rounds, target, (g) =>
        Array.from({ length: count }, () => balancedSemiprime(g, lo, lo * 10n, isPrime)),
      ),
    )
  }
  // Three numbers, as each side's time for one is mostly the luck of its curves; the first is the row's
  // single number of the runs before.
  list.push(
    row('factor, a 20-digit prime times a 280-digit prime', 'factor', 1, '1', (g) =>
      Array.from(
        { length: 3 },
        () => randomPrimeDigits(g, 20, isPrime) * randomPrime(g, 10n ** 279n, 10n ** 280n, isPrime),
      ),
    ),
  )
  return list
}

/** PARI confirms what the generator claims: primes are primes, semiprimes have two prime factors. */
function checkWithPari(c: Case): void {
  const check =
    c.kind === 'factor'
      ? 'for(i=1,#v,f=factor(v[i]);if(vecsum(f[,2])!=2,print("bad ",i)))'
      : c.name.includes('odd')
        ? ''
        : 'for(i=1,#v,if(!ispseudoprime(v[i]),print("bad ",i)))'
  if (!check || c.name.includes('280-digit')) return
  const bad = gp(`${gpVector(c.numbers)}${check};print("ok")`).filter((line) => line.startsWith('bad'))
  if (bad.length > 0) throw new Error(`${c.name}: PARI disagrees with the generator at ${bad.join(', ')}`)
}

/** Median over rounds of the mean ms per input. */
function timeOurs(c: Case): number {
  const run =
    c.kind === 'factor'
      ? (n: bigint) => {
          const result = primeChecker.run({ number: n }, { budgetMs: FACTOR_BUDGET_MS })
          if (!result.factorization_complete || result.factors.reduce((a, b) => a * b, 1n) !== n) {
            throw new Error(`incomplete factorisation of ${n}`)
          }
        }
      : (n: bigint) => {
          // One call, checked for 'bpsw' rows: the check used to call isPrime a second time, doubling the
          // time.
          const prime = isPrime(n)
          if (c.kind === 'bpsw' && !prime) throw new Error(`${n} should be prime`)
        }
  // One untimed pass lets V8 and the kernel warm up.
  if (c.rounds > 1) for (const n of c.numbers) run(n)
  const perInput: number[] = []
  for (let r = 0; r < c.rounds; r++) {
    const start = process.cpuUsage()
    for (const n of c.numbers) run(n)
    const used = process.cpuUsage(start)
    perInput.push((used.user + used.system) / 1000 / c.numbers.length)
  }
  return median(perInput)
}

function timePari(c: Case): number {
  const call = { isprime: 'isprime(v[i])', bpsw: 'ispseudoprime(v[i])', factor: 'factor(v[i])' }[c.kind]
  const lines = gp(
    `${gpVector(c.numbers)}${c.rounds > 1 ? `for(i=1,#v,${call});` : ''}for(r=1,${c.rounds},t=getabstime();for(i=1,#v,${call});print(getabstime()-t))`,
  )
  return median(lines.map((ms) => Number(ms) / c.numbers.length))
}

function format(ms: number): string {
  if (ms < 0.01) return `${(ms * 1000).toFixed(2)} us`
  if (ms < 1) return `${(ms * 1000).toFixed(0)} us`
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`
  return `${(ms / 1000).toFixed(2)} s`
}

console.log(`bench:prime seed ${SEED}, ${ROUNDS} rounds, Node ${process.version}`)
if (!hasGp) console.log('gp (PARI/GP) is not installed: PARI columns skipped (apt-get install pari-gp)')
else console.log(`PARI/GP ${gp('print(version())')[0]}`)
// Optional filter arguments keep only the rows whose names contain one of them,
// e.g. `tsx bench/prime/prime.ts 30-digit`.
const filters = process.argv.slice(2)
const all = cases().filter((c) => filters.length === 0 || filters.some((f) => c.name.includes(f)))
console.log('| case | inputs | ours | PARI | ours / PARI | target |')
console.log('|---|---|---|---|---|---|')
for (const lazy of all) {
  const c: Case = { ...lazy, numbers: lazy.build() }
  if (hasGp) checkWithPari(c)
  const ours = timeOurs(c)
  const pari = hasGp ? timePari(c) : undefined
  const ratio =
    pari === undefined ? 'skipped' : pari > 0 ? `${(ours / pari).toFixed(2)}x` : 'PARI under 1 ms tick'
  const pariText = pari === undefined ? 'skipped (no gp)' : format(pari)
  console.log(
    `| ${c.name} | ${c.numbers.length} | ${format(ours)} | ${pariText} | ${ratio} | <= ${c.target}x |`,
  )
}

// Where a fresh process's factor-row time goes, round by round: the rows of
// `tsx bench/prime/prime.ts semiprimes` (64-bit, then 20-digit) with bench/prime/prime.ts's inputs, untimed
// pass and rounds, printing per round the CPU ms per input of the whole process (process.cpuUsage, as
// bench/prime/prime.ts counts) and of its main thread alone (Linux /proc/self/task/<pid>/schedstat); the
// difference ran on V8's other threads (its optimising compiler, concurrent GC).
// `npx tsx bench/prime/warmup.ts [checkout]` times another checkout's PrimeChecker (its kernel built)
// instead of this one's.
import { readFileSync } from 'node:fs'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { primeCheckerOf } from './other-checkout.js'
import { balancedSemiprime, rowGenerator } from './prime-cases.js'

writeResultOnExit(
  'warmup',
  {
    title: "a fresh process's factor-row time, round by round",
    script: 'bench/prime/warmup.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/warmup.ts',
  },
  ['BENCH_SEED'],
)

const SEED = Number(process.env.BENCH_SEED ?? 20261121)
const primeChecker = await primeCheckerOf(process.argv[2] ?? '.')

function mainThreadMs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
}

function run(numbers: bigint[]): void {
  for (const n of numbers) {
    const { factors } = primeChecker.run({ number: n }, { budgetMs: 600_000 })
    if (factors.reduce((a, b) => a * b, 1n) !== n) throw new Error(`${n} misfactored`)
  }
}

function row(name: string, numbers: bigint[], rounds: number): void {
  run(numbers)
  const all: string[] = []
  const main: string[] = []
  for (let r = 0; r < rounds; r++) {
    const mainStart = mainThreadMs()
    const start = process.cpuUsage()
    run(numbers)
    const used = process.cpuUsage(start)
    all.push(((used.user + used.system) / 1000 / numbers.length).toFixed(3))
    main.push(((mainThreadMs() - mainStart) / numbers.length).toFixed(3))
  }
  console.log(`| ${name} | ${all.join(' ')} | ${main.join(' ')} |`)
}

console.log(`## CPU ms per input, each round after an untimed pass; seed ${SEED}, Node ${process.version}`)
console.log()
console.log('| row | whole process | main thread |')
console.log('|---|---|---|')
const g64 = rowGenerator(SEED, 'factor, balanced 64-bit semiprimes')
row(
  '64-bit',
  Array.from({ length: 50 }, () => balancedSemiprime(g64, 1n << 63n, 1n << 64n, isPrime)),
  5,
)
const g20 = rowGenerator(SEED, 'factor, balanced 20-digit semiprimes')
const lo = 10n ** 19n
row(
  '20-digit',
  Array.from({ length: 20 }, () => balancedSemiprime(g20, lo, lo * 10n, isPrime)),
  3,
)

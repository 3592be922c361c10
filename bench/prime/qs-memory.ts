// The quadratic sieve's memory (how much it uses at 70 digits): one quadraticSieve call on a
// seeded balanced semiprime, with the process's resident set and the kernel's linear memory before and after.
// Usage: npx tsx bench/prime/qs-memory.ts [digits]   (default 70; BENCH_SEED=20261121; build the kernel
// first, npm run build:wasm). Add `node --cpu-prof --import tsx` instead of tsx for where its time goes.
import { Budget } from '../../src/algorithms/prime-checker/budget.js'
import { kernel } from '../../src/algorithms/prime-checker/kernel.js'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { quadraticSieve } from '../../src/algorithms/prime-checker/quadratic-sieve.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { balancedSemiprime, generator } from './prime-cases.js'

writeResultOnExit(
  'qs-memory',
  {
    title: "the quadratic sieve's memory on one number",
    script: 'bench/prime/qs-memory.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/qs-memory.ts',
  },
  ['BENCH_SEED'],
)

const SEED = Number(process.env.BENCH_SEED ?? 20261121)
const digits = Number(process.argv[2] ?? 70)
const lo = 10n ** BigInt(digits - 1)
const n = balancedSemiprime(generator(SEED + digits), lo, lo * 10n, isPrime)

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
const snapshot = (when: string) => {
  const usage = process.memoryUsage()
  return `| ${when} | ${mb(usage.rss)} | ${mb(usage.heapUsed)} | ${mb(kernel.memory.buffer.byteLength)} |`
}

const before = snapshot('before')
const cpu = process.cpuUsage()
const start = performance.now()
const d = quadraticSieve(n, new Budget(performance.now() + 3_600_000))
const wall = performance.now() - start
const { user, system } = process.cpuUsage(cpu)
if (d === undefined || d <= 1n || d >= n || n % d !== 0n) throw new Error(`no divisor of ${n}: ${d}`)
console.log(`## One quadraticSieve call: ${digits}-digit n = ${n}, seed ${SEED}, Node ${process.version}`)
console.log()
console.log('| when | RSS MB | JS heap used MB | kernel memory MB |')
console.log('|---|---|---|---|')
console.log(before)
console.log(snapshot('after'))
console.log()
// maxRSS is in KiB: the process's peak, the sieve's working set included, whatever the GC freed since.
console.log(`Peak RSS ${mb(process.resourceUsage().maxRSS * 1024)} MB.`)
console.log(`Divisor ${d}; ${(wall / 1000).toFixed(1)} s wall, ${((user + system) / 1e6).toFixed(1)} s CPU.`)

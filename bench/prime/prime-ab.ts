// Same-run A/B of Baillie-PSW on big primes: this checkout's engine against another checkout's (its path the
// first argument, with its own kernel built), and PARI/GP's ispseudoprime, interleaved round by round so that
// a busy machine slows all three alike; all three are CPU times (other-checkout.ts).
// `npx tsx bench/prime/prime-ab.ts /tmp/old [digits,...]`; ROUNDS (default 7).

import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { median } from '../lib/stats.js'
import { checkoutArgument, cpuMs, importFrom } from './other-checkout.js'
import { gp } from './pari.js'
import { generator, randomPrimeDigits } from './prime-cases.js'

writeResultOnExit(
  'prime-ab',
  {
    title: "Baillie-PSW on big primes, another checkout's engine side by side",
    script: 'bench/prime/prime-ab.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/prime-ab.ts',
  },
  ['ROUNDS'],
)

const other = checkoutArgument('tsx bench/prime/prime-ab.ts <other checkout> [digits,...]')
const digitsList = (process.argv[3] ?? '100,300,1000,3000').split(',').map(Number)
const ROUNDS = Number(process.env.ROUNDS ?? 7)
/** Inputs per size: about the same total time per size. */
const COUNT: Record<number, number> = { 100: 100, 300: 20, 1000: 3, 3000: 1 }

const { isPrime: otherIsPrime } = await importFrom<{ isPrime: (n: bigint) => boolean }>(
  other,
  'src/algorithms/prime-checker/primality.ts',
)

/**
 * Mean CPU ms per input over one pass: PARI's getabstime counts CPU time too (a gp `system("sleep 1")` adds 0
 * to it), so time lost to other processes on a shared machine counts on neither side.
 */
function timeOurs(test: (n: bigint) => boolean, numbers: bigint[]): number {
  const ms = cpuMs(() => {
    for (const n of numbers) if (!test(n)) throw new Error(`${n} should be prime`)
  })
  return ms / numbers.length
}

function timePari(numbers: bigint[]): number {
  const [ms] = gp(
    `v=[${numbers.join(',')}];t=getabstime();for(i=1,#v,ispseudoprime(v[i]));print(getabstime()-t)`,
  )
  return Number(ms) / numbers.length
}

const g = generator(20261121)
console.log(
  `prime-ab: other ${other}, ${ROUNDS} rounds, Node ${process.version}, PARI/GP ${gp('print(version())')[0]}`,
)
console.log('| digits | inputs | other | this | this / other | PARI | this / PARI | other / PARI |')
console.log('|---|---|---|---|---|---|---|---|')
for (const digits of digitsList) {
  const count = COUNT[digits] ?? 1
  // PARI's nextprime from a seeded start above 500 digits, where the engine's own search takes minutes.
  const numbers = Array.from({ length: count }, () => {
    if (digits < 500) return randomPrimeDigits(g, digits, isPrime)
    const start = g.between(10n ** BigInt(digits - 1), 10n ** BigInt(digits))
    return BigInt(gp(`print(nextprime(${start}))`)[0] as string)
  })
  // One untimed pass each to warm up.
  timeOurs(otherIsPrime, numbers)
  timeOurs(isPrime, numbers)
  const times = { other: [] as number[], self: [] as number[], pari: [] as number[] }
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which engine goes first.
    if (r % 2 === 0) times.other.push(timeOurs(otherIsPrime, numbers))
    times.self.push(timeOurs(isPrime, numbers))
    if (r % 2 === 1) times.other.push(timeOurs(otherIsPrime, numbers))
    times.pari.push(timePari(numbers))
  }
  const [o, s, p] = [median(times.other), median(times.self), median(times.pari)]
  console.log(
    `| ${digits} | ${count} | ${o.toFixed(3)} ms | ${s.toFixed(3)} ms | ${(s / o).toFixed(2)}x | ${p.toFixed(3)} ms | ${(s / p).toFixed(2)}x | ${(o / p).toFixed(2)}x |`,
  )
}

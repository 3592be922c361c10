// The target "with the 2 s /invoke budget, every balanced 50-digit semiprime is factored completely", through
// the real service. Starts `node dist/main.js serve` on port 0 (build it first: npm run build), POSTs /invoke
// with COUNT seeded balanced 50-digit semiprimes one at a time, and reports per number the wall time seen by
// the client, the service process's CPU time over the request (/proc, all its threads) and whether the
// answer is complete: factors multiplying back to n, each proven prime by PARI/GP's isprime (an independent
// implementation). PARI's factor() on the same numbers, in the same run, gives the baseline.
// Usage: npm run build && npx tsx bench/prime/invoke-50.ts   (COUNT=20 DIGITS=50 BENCH_SEED=20261123)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { parseExact } from '../../test/helpers/json.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { startService } from '../lib/service.js'
import { median } from '../lib/stats.js'
import { gp } from './pari.js'
import { balancedSemiprime, generator } from './prime-cases.js'

writeResultOnExit(
  'invoke-50',
  {
    title: 'balanced 50-digit semiprimes through /invoke within its 2 s budget',
    script: 'bench/prime/invoke-50.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/invoke-50.ts',
  },
  ['BENCH_SEED', 'COUNT', 'DIGITS'],
)

const SEED = Number(process.env.BENCH_SEED ?? 20261123)
const COUNT = Number(process.env.COUNT ?? 20)
const DIGITS = Number(process.env.DIGITS ?? 50)
const BUDGET_MS = 2000

const g = generator(SEED + DIGITS)
const lo = 10n ** BigInt(DIGITS - 1)
// One more number than timed: the first request warms the worker thread (V8's compiles, the kernel's memory).
const numbers = Array.from({ length: COUNT + 1 }, () => balancedSemiprime(g, lo, lo * 10n, isPrime))

const dataDir = mkdtempSync(join(tmpdir(), 'invoke-50-'))
const { child, url } = await startService({
  nodeFlags: ['--max-semi-space-size=1'],
  args: ['--data-dir', dataDir],
  env: { ALGOSERVE_INVOKE_FACTOR_BUDGET_MS: String(BUDGET_MS), ALGOSERVE_LOG_LEVEL: 'info' },
})

/** The service process's CPU time in ms (user + system, every thread), from /proc. */
function serviceCpuMs(): number {
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the command name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

interface Answer {
  n: bigint
  wallMs: number
  cpuMs: number
  elapsed: unknown
  complete: boolean
  factors: bigint[]
}

async function invoke(n: bigint): Promise<Answer> {
  const cpu = serviceCpuMs()
  const start = performance.now()
  const response = await fetch(`${url}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"number": ${n}}`,
  })
  const text = await response.text()
  const wallMs = performance.now() - start
  const cpuMs = serviceCpuMs() - cpu
  if (response.status !== 200) throw new Error(`status ${response.status}: ${text}`)
  const body = parseExact(text) as {
    result: { factors: bigint[]; factorization_complete: boolean }
    metadata: { elapsed_time: unknown }
  }
  return {
    n,
    wallMs,
    cpuMs,
    elapsed: body.metadata.elapsed_time,
    complete: body.result.factorization_complete,
    factors: body.result.factors.map(BigInt),
  }
}

try {
  const warm = await invoke(numbers[0] as bigint)
  const answers: Answer[] = []
  for (const n of numbers.slice(1)) answers.push(await invoke(n))

  // Every factor of every answer to PARI's isprime (a proof, APR-CL or ECPP, not a probable-prime test),
  // then PARI's own factor() on the same numbers for the baseline, CPU time per number.
  const allFactors = answers.flatMap((a) => a.factors)
  const proofs = gp(`{ foreach([${allFactors.join(',')}], p, print(isprime(p) != 0)) }`)
  const pari = gp(
    `{ foreach([${answers.map((a) => a.n).join(',')}], n, my(t = getabstime()); factor(n); print(getabstime() - t)) }`,
  ).map(Number)

  console.log(
    `invoke-${DIGITS}: seed ${SEED}, ${COUNT} balanced ${DIGITS}-digit semiprimes, /invoke budget ${BUDGET_MS} ms, ` +
      `Node ${process.version}, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  )
  console.log(`warm-up request: ${warm.wallMs.toFixed(0)} ms wall, complete ${warm.complete}`)
  console.log()
  console.log('| # | n | wall ms | service CPU ms | PARI factor() CPU ms | complete | check |')
  console.log('|---|---|---|---|---|---|---|')
  let proof = 0
  let failures = 0
  answers.forEach((a, i) => {
    const product = a.factors.reduce((x, y) => x * y, 1n)
    const proven = a.factors.map(() => proofs[proof++] === '1')
    const ok = a.complete && product === a.n && a.factors.length >= 2 && proven.every(Boolean)
    if (!ok) failures++
    const check = ok
      ? 'product = n, every factor prime (PARI isprime)'
      : `FAILED: product ${product === a.n ? '=' : '!='} n, primes ${proven.join(',')}`
    console.log(
      `| ${i + 1} | ${a.n} | ${a.wallMs.toFixed(0)} | ${a.cpuMs.toFixed(0)} | ${pari[i]} | ${a.complete} | ${check} |`,
    )
  })
  const wall = answers.map((a) => a.wallMs)
  const cpu = answers.map((a) => a.cpuMs)
  console.log()
  console.log(
    `wall ms: median ${median(wall).toFixed(0)}, max ${Math.max(...wall).toFixed(0)}; ` +
      `service CPU ms: median ${median(cpu).toFixed(0)}, max ${Math.max(...cpu).toFixed(0)}; ` +
      `PARI CPU ms: median ${median(pari).toFixed(0)}, max ${Math.max(...pari)}; ` +
      `ours / PARI (CPU medians) ${(median(cpu) / median(pari)).toFixed(2)}x`,
  )
  console.log(`complete and checked: ${answers.length - failures} of ${answers.length}`)
  if (failures > 0) process.exitCode = 1
} finally {
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
  rmSync(dataDir, { recursive: true, force: true })
}

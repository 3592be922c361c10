// Same-run A/B of one ECM curve (stage 1 to B1, stage 2 to 100 B1) between this checkout (ecmCurve) and the
// kernel of another checkout from before ecmCurve (commit 980e6cf: its path the first argument, its kernel
// built), in one process, CPU time, interleaved rounds:
// `npx tsx bench/prime/ecm-ab.ts /tmp/old [B1] [sizes...]`. A size is 32-bit limbs of a random prime modulus,
// or digits with a d ("300d"); this checkout runs each size on montn ("32") and on mont28 ("28"). The old
// side is timed from its kernel calls, without the BigInt curve set-up that the new side's time includes (a
// fraction of a millisecond at 300 digits).

import { Budget } from '../../src/algorithms/prime-checker/budget.js'
import { ecmCurve } from '../../src/algorithms/prime-checker/ecm.js'
import type * as KernelModule from '../../src/algorithms/prime-checker/kernel.js'
import { isPrime } from '../../src/algorithms/prime-checker/primality.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { median } from '../lib/stats.js'
import { checkoutArgument, cpuMs, importFrom } from './other-checkout.js'
import { generator } from './prime-cases.js'

writeResultOnExit(
  'ecm-ab',
  {
    title: "one ECM curve, another checkout's side by side",
    script: 'bench/prime/ecm-ab.ts',
    history: 'docs/benchmarks/prime-checker.md',
    command: 'npx tsx bench/prime/ecm-ab.ts',
  },
  ['ROUNDS'],
)

const other = await importFrom<typeof KernelModule>(
  checkoutArgument('tsx bench/prime/ecm-ab.ts <other checkout> [B1] [limbs...]'),
  'src/algorithms/prime-checker/kernel.ts',
)
const B1 = Number(process.argv[3] ?? 11000)
const SIZES = process.argv.slice(4)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const D = 210
// Slots of the old checkout's wasm/prime/ecm.ts, which exports none.
const [SLOT_ONE, SLOT_A24, SLOT_QX, SLOT_QZ, SLOT_END] = [0, 20, 21, 22, 130]

/** Stage 1's prime powers and stage 2's masks as the old ecm.ts built them. */
function level(b1: number): { powers: Uint32Array; m0: number; m1: number; masks: Uint32Array } {
  const b2 = 100 * b1
  const composite = new Uint8Array(b2 + D + 1)
  for (let i = 2; i * i <= b2 + D; i++)
    if (!composite[i]) for (let j = i * i; j <= b2 + D; j += i) composite[j] = 1
  const powers: number[] = []
  for (let p = 2; p <= b1; p++) {
    if (composite[p]) continue
    let q = p
    while (q * p <= b1) q *= p
    powers.push(q)
  }
  const babies: number[] = []
  for (let j = 1; j < D / 2; j += 2) if (j % 3 !== 0 && j % 5 !== 0 && j % 7 !== 0) babies.push(j)
  const m0 = Math.max(1, Math.floor(b1 / D))
  const m1 = Math.floor(b2 / D) + 1
  const masks = new Uint32Array(m1 - m0)
  for (let m = m0; m < m1; m++) {
    let mask = 0
    babies.forEach((j, i) => {
      for (const q of [m * D - j, m * D + j]) if (q > b1 && q <= b2 && !composite[q]) mask |= 1 << i
    })
    masks[m - m0] = mask >>> 0
  }
  return { powers: Uint32Array.from(powers), m0, m1, masks }
}

type Mode = 'old' | '32' | '28'

/**
 * CPU ms of one curve; the old checkout's is driven through its kernel with a fixed point and (A + 2) / 4.
 */
function curveMs(mode: Mode, n: bigint, lvl: ReturnType<typeof level>): number {
  if (mode !== 'old') {
    return cpuMs(() => ecmCurve(n, 7n, B1, mode === '28' ? 28 : 32, new Budget(Number.POSITIVE_INFINITY)))
  }
  const { kernel } = other
  const k = other.setModulus(n)
  const end = kernel.slotPtr(SLOT_END)
  other.ensureBytes(end + 4 * Math.max(lvl.powers.length, lvl.masks.length))
  const write = (i: number, x: bigint): void => other.writeLimbs(kernel.slotPtr(i), x, k)
  return cpuMs(() => {
    const one = (1n << BigInt(32 * k)) % n
    write(SLOT_ONE, one)
    write(SLOT_A24, (12345n * one) % n)
    write(SLOT_QX, (678n * one) % n)
    write(SLOT_QZ, (9n * one) % n)
    new Uint32Array(kernel.memory.buffer, end, lvl.powers.length).set(lvl.powers)
    kernel.ecmStage1(end, lvl.powers.length, 0, 2 ** 30)
    ;(kernel.ecmStage2Setup as unknown as (m0: number, one: number) => void)(lvl.m0, SLOT_ONE)
    new Uint32Array(kernel.memory.buffer, end, lvl.masks.length).set(lvl.masks)
    kernel.ecmStage2(end, lvl.m0, lvl.m0, lvl.m1, 2 ** 30)
  })
}

const g = generator(20261121)
const lvl = level(B1)
console.log(`B1 ${B1}, B2 ${100 * B1}, ${ROUNDS} rounds, CPU ms per curve (median)`)
console.log('| size | old | new montn | new mont28 | montn / old | mont28 / old |')
console.log('|---|---|---|---|---|---|')
for (const size of SIZES.length > 0 ? SIZES : ['8', '12', '16', '18', '20', '24', '32']) {
  const digits = size.endsWith('d') ? Number(size.slice(0, -1)) : undefined
  const bits = 32 * Number(size)
  let n =
    digits === undefined
      ? g.between(1n << BigInt(bits - 1), 1n << BigInt(bits)) | 1n
      : g.between(10n ** BigInt(digits - 1), 10n ** BigInt(digits)) | 1n
  while (!isPrime(n)) n += 2n
  const times: Record<Mode, number[]> = { old: [], '32': [], '28': [] }
  for (let r = 0; r < ROUNDS; r++)
    for (const mode of ['old', '32', '28'] as Mode[]) times[mode].push(curveMs(mode, n, lvl))
  const [o, a, b] = [median(times.old), median(times['32']), median(times['28'])]
  console.log(
    `| ${size} | ${o.toFixed(1)} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(a / o).toFixed(3)} | ${(b / o).toFixed(3)} |`,
  )
}

// Lenstra's elliptic curve method (1987) on the kernel (wasm/prime/ecm.ts): Suyama's parametrisation, whose
// group orders are divisible by 12, and B1 rising along Zimmermann and Dodson's table ("20 years of ECM",
// 2006) so that small factors come first and larger ones as the budget allows.
import { gcd } from './bigint-math.js'
import { type Budget, grouped } from './budget.js'
import {
  BITS28,
  ECM_BABY_PREFIX,
  ECM_BABY_X,
  ECM_BABY_Z,
  ECM_CHUNK,
  ECM_GIANT_PREFIX,
  ECM_GIANT_X,
  ECM_GIANT_Z,
  ECM_SLOT_A24,
  ECM_SLOT_ACC,
  ECM_SLOT_INV,
  ECM_SLOT_QX,
  ECM_SLOT_QZ,
  ECM_SLOTS,
  ensureBytes,
  kernel,
  type LimbBits,
  limbCount,
  readLimbs,
  readLimbs28At,
  setModulus,
  setModulus28,
  writeLimbs,
  writeLimbs28At,
} from './kernel.js'
import { multiplierProgram, programMuls, stage1Program } from './prac.js'

/** Slot 0, below the kernel's, holds 1 in Montgomery form; ecmStage2Setup is told where. */
const ECM_SLOT_ONE = 0

/**
 * Stage 2's D: 2310 has 240 baby steps against 210's 24, which costs about 4,000 more multiplications per
 * curve and saves 10 per giant step (an addition, a prefix product and 3 for the inversion), 11 times fewer.
 * That pays from B2 of about 10^5, and needs B1 >= D / 2 so that giant steps start at m = 1 or later.
 */
function stage2D(b1: number): number {
  return b1 >= 2000 ? 2310 : 210
}

/** [B1, curves] for factors of about 10, 12, 15, 20, 25, 30 and 35 digits. */
const SCHEDULE: [number, number][] = [
  [150, 8],
  [500, 15],
  [2000, 25],
  [11000, 90],
  [50000, 300],
  [250000, 700],
  [1000000, 1800],
]

/** The curves of the whole schedule: ECM's progress is the share of them done (past the table, all). */
const SCHEDULE_CURVES = SCHEDULE.reduce((sum, [, curves]) => sum + curves, 0)

/**
 * Stage 2 goes to 100 B1, capped so that its prime sieve stays small. At B1 = 11000 a curve costs 141k
 * multiplications in stage 1 and 78k, 147k or 214k in stage 2 to 100, 200 or 300 B1 (counted from the
 * program and masks). Taking the group order to be as smooth as a random integer of p / 12 (Dickman's rho,
 * one prime allowed in (B1, B2]), a 20-digit p needs about 118, 98 or 88 curves: 26, 28 or 31 million
 * multiplications per factor, so the longer stage 2 does not pay; nor does B1 = 20000 (26 million).
 */
const B2_MAX = 20_000_000

/**
 * The most 32-bit limbs at which curves run on montn rather than mont28 (512 bits, about 154 digits): curves
 * do more additions and copies per product than Baillie-PSW, so mont28 pays off a little later
 * (`bench/prime/ecm-ab.ts`; docs/benchmarks/prime-checker.md, runs of 2026-11-21 20:43 to 22:04 UTC).
 */
export const ECM_MONTN_MAX_LIMBS = 16

/** Work handed to the kernel per call, in ms: the budget is checked between calls. */
const SLICE_MS = 10

interface Level {
  b1: number
  /** Stage 1's program (prac.ts): each prime up to B1 as often as its largest power up to B1. */
  program: Uint8Array
  d: number
  /** 32-bit mask words per giant step: one bit per baby step. */
  words: number
  /**
   * Giant steps m0 <= m < m1; bit i of masks[(m - m0) words + i / 32] is set when m D +- j_i is a prime in
   * (B1, B2].
   */
  m0: number
  m1: number
  masks: Uint32Array
}

const levels = new Map<number, Level>()

function level(b1: number): Level {
  const cached = levels.get(b1)
  if (cached) return cached
  const b2 = Math.min(100 * b1, B2_MAX)
  const d = stage2D(b1)
  const composite = sieve(b2 + d)
  const primes: number[] = []
  for (let p = 2; p <= b1; p++) if (!composite[p]) primes.push(p)
  const babies = babySteps(d)
  const words = Math.ceil(babies.length / 32)
  const m0 = Math.max(1, Math.floor(b1 / d))
  const m1 = Math.floor(b2 / d) + 1
  const masks = new Uint32Array((m1 - m0) * words)
  for (let m = m0; m < m1; m++) {
    babies.forEach((j, i) => {
      const w = (m - m0) * words + (i >> 5)
      for (const q of [m * d - j, m * d + j]) {
        if (q > b1 && q <= b2 && !composite[q]) masks[w] = (masks[w] as number) | (1 << (i & 31))
      }
    })
  }
  const made = { b1, program: stage1Program(primes, b1), d, words, m0, m1, masks }
  levels.set(b1, made)
  return made
}

/** The odd j < d / 2 prime to d, in the kernel's order. */
function babySteps(d: number): number[] {
  const js: number[] = []
  for (let j = 1; j < d / 2; j += 2) if ([3, 5, 7, 11].every((p) => d % p !== 0 || j % p !== 0)) js.push(j)
  return js
}

function sieve(limit: number): Uint8Array {
  const composite = new Uint8Array(limit + 1)
  composite[0] = 1
  composite[1] = 1
  for (let i = 2; i * i <= limit; i++)
    if (!composite[i]) for (let j = i * i; j <= limit; j += i) composite[j] = 1
  return composite
}

/**
 * A nontrivial divisor of the odd composite n (no small factors, not a perfect power), or undefined at the
 * deadline.
 */
export function ecm(n: bigint, budget: Budget): bigint | undefined {
  return ecmKernel(n, budget, limbCount(n) <= ECM_MONTN_MAX_LIMBS ? 32 : BITS28)
}

/** ecm on the given limb size: 32 for montn, 28 for mont28 (exported to test both). */
export function ecmKernel(n: bigint, budget: Budget, limbBits: LimbBits): bigint | undefined {
  let sigma = 6n
  let done = 0
  for (let round = 0; ; round++) {
    // Past the table, the last level goes on with fresh curves.
    const [b1, curves] = SCHEDULE[Math.min(round, SCHEDULE.length - 1)] as [number, number]
    const lvl = level(b1)
    for (let c = 0; c < curves; c++) {
      sigma++
      const found = curve(n, sigma, lvl, budget, limbBits)
      if (found === undefined) return undefined
      if (found !== 1n && found !== n) return found
      done++
      budget.progress?.(
        Math.min(1, done / SCHEDULE_CURVES),
        `ECM: curve ${grouped(c + 1)} of ${grouped(curves)} at B1=${b1}`,
      )
    }
  }
}

/**
 * One curve, Suyama's for sigma, with the schedule's stage 1 and 2 for b1 (exported for tests and
 * bench/prime/ecm-ab.ts): a divisor, 1 or n when it fails, or undefined at the deadline.
 */
export function ecmCurve(
  n: bigint,
  sigma: bigint,
  b1: number,
  limbBits: LimbBits,
  budget: Budget,
): bigint | undefined {
  return curve(n, sigma, level(b1), budget, limbBits)
}

/** One curve: a divisor (1 or n when it fails), or undefined at the deadline. */
function curve(n: bigint, sigma: bigint, lvl: Level, budget: Budget, limbBits: LimbBits): bigint | undefined {
  const start = startCurve(n, sigma, limbBits)
  if (typeof start === 'bigint') return start
  const { k, read, write } = start
  const base = kernel.ecmSlot(ECM_SLOTS)
  const program = lvl.program
  ensureBytes(base + Math.max(program.length, 4 * ECM_CHUNK * lvl.words))
  const memory = (length: number): Uint32Array => new Uint32Array(kernel.memory.buffer, base, length)

  new Uint8Array(kernel.memory.buffer, base, program.length).set(program)
  let i = 0
  const stage1 = sliced(budget, k, (muls) => {
    const next = kernel.ecmStage1(base, program.length, i, muls)
    const spent = programMuls(program, i, next)
    i = next
    return i < program.length ? spent : undefined
  })
  if (!stage1) return undefined
  const g1 = gcd(read(ECM_SLOT_QZ), n)
  if (g1 !== 1n) return g1

  // D Q and two ladders to m0 D Q.
  if (!budget.affords(200 + 24 * Math.log2(lvl.m1 * lvl.d), k)) return undefined
  kernel.ecmStage2Setup(lvl.d, lvl.m0, ECM_SLOT_ONE)
  let babies = -1
  const babySteps = sliced(budget, k, (muls) => {
    babies = kernel.ecmBabySteps(muls)
    return babies < 0 ? muls : undefined
  })
  if (!babySteps) return undefined
  // Montgomery forms are x R: the inverse of P R is R^2 / (P R) in that form.
  const r2 = (start.one * start.one) % n
  // A divisor when a product of Z shares one with n, 'deadline', or undefined once the table is normalised.
  const normalize = (
    xs: number,
    zs: number,
    prefix: number,
    count: number,
  ): bigint | 'deadline' | undefined => {
    if (!budget.affords(3 * count, k)) return 'deadline'
    const product = read(prefix + count - 1)
    const g = gcd(product, n)
    if (g !== 1n) return g
    write(ECM_SLOT_INV, (r2 * modInverse(product, n)) % n)
    kernel.ecmNormalize(xs, zs, prefix, count)
    return undefined
  }
  const gb = normalize(ECM_BABY_X, ECM_BABY_Z, ECM_BABY_PREFIX, babies)
  if (gb !== undefined) return gb === 'deadline' ? undefined : gb
  for (let m = lvl.m0; m < lvl.m1; m += ECM_CHUNK) {
    const count = Math.min(ECM_CHUNK, lvl.m1 - m)
    let e = 0
    const giants = sliced(budget, k, (muls) => {
      const next = kernel.ecmGiantSteps(e, count, muls)
      const spent = 7 * (next - e)
      e = next
      return e < count ? spent : undefined
    })
    if (!giants) return undefined
    const gg = normalize(ECM_GIANT_X, ECM_GIANT_Z, ECM_GIANT_PREFIX, count)
    if (gg !== undefined) return gg === 'deadline' ? undefined : gg
    const offset = (m - lvl.m0) * lvl.words
    memory(count * lvl.words).set(lvl.masks.subarray(offset, offset + count * lvl.words))
    e = 0
    const pairs = sliced(budget, k, (muls) => {
      e = kernel.ecmStage2(base, lvl.words, e, count, muls)
      return e < count ? muls : undefined
    })
    if (!pairs) return undefined
  }
  return gcd(read(ECM_SLOT_ACC), n)
}

/**
 * Runs kernel work in calls of about SLICE_MS, checking the budget before each: `slice` is given a number of
 * multiplications and returns those it spent, or undefined once the work is done. False at the deadline.
 */
function sliced(budget: Budget, k: number, slice: (muls: number) => number | undefined): boolean {
  for (;;) {
    const muls = budget.mulsIn(SLICE_MS, k)
    if (!budget.affords(Math.min(muls, 400), k)) return false
    const start = performance.now()
    const spent = slice(muls)
    if (spent === undefined) return true
    budget.observe(spent, k, performance.now() - start)
  }
}

interface CurveStart {
  /** Limbs of the modulus in the chosen arithmetic. */
  k: number
  /** 1 in Montgomery form: R mod n. */
  one: bigint
  /** A slot's residue (in Montgomery form). */
  read(slot: number): bigint
  write(slot: number, x: bigint): void
}

/**
 * Sets the modulus and arithmetic, and writes Suyama's curve for sigma into the kernel's slots; returns a
 * divisor instead when the parametrisation's denominator shares one with n.
 */
function startCurve(n: bigint, sigma: bigint, limbBits: LimbBits): CurveStart | bigint {
  // Suyama: u = s^2 - 5, v = 4 s, x0 = u^3 / v^3, (A + 2) / 4 = (v - u)^3 (3u + v) / (16 u^3 v).
  const u = (sigma * sigma - 5n) % n
  const v = (4n * sigma) % n
  const den = (16n * u ** 3n * v) % n
  const g = gcd(den, n)
  if (g !== 1n) return g
  const a24 = ((v - u + n) ** 3n * (3n * u + v) * modInverse(den, n)) % n

  const on28 = limbBits === BITS28
  const k = on28 ? setModulus28(n) : setModulus(n)
  kernel.ecmArithmetic(on28, k)
  if (on28) {
    // mont28's products read pad limbs past k (PAD in mont28.ts), which must be zero.
    const first = kernel.ecmSlot(0)
    const end = kernel.ecmSlot(ECM_SLOTS)
    ensureBytes(end)
    new Uint8Array(kernel.memory.buffer, first, end - first).fill(0)
  }
  const write = on28
    ? (slot: number, x: bigint) => writeLimbs28At(kernel.ecmSlot(slot), x, k)
    : (slot: number, x: bigint) => writeLimbs(kernel.ecmSlot(slot), x, k)
  const read = on28
    ? (slot: number) => readLimbs28At(kernel.ecmSlot(slot), k)
    : (slot: number) => readLimbs(kernel.ecmSlot(slot), k)
  const one = (1n << BigInt(limbBits * k)) % n
  write(ECM_SLOT_ONE, one)
  write(ECM_SLOT_A24, (a24 * one) % n)
  write(ECM_SLOT_QX, (u ** 3n * one) % n)
  write(ECM_SLOT_QZ, (v ** 3n * one) % n)
  return { k, one, read, write }
}

/**
 * Suyama's point for sigma multiplied by e in the kernel, as (X, Z) out of Montgomery form, for tests against
 * a reference; a divisor of n instead if the curve's parametrisation found one. A stage 1 program (prac.ts)
 * may stand for e.
 */
export function ecmMultiply(
  n: bigint,
  sigma: bigint,
  e: number | Uint8Array,
  limbBits: LimbBits,
): [bigint, bigint] | bigint {
  const start = startCurve(n, sigma, limbBits)
  if (typeof start === 'bigint') return start
  const base = kernel.ecmSlot(ECM_SLOTS)
  const program = typeof e === 'number' ? multiplierProgram(e) : e
  ensureBytes(base + program.length)
  new Uint8Array(kernel.memory.buffer, base, program.length).set(program)
  kernel.ecmStage1(base, program.length, 0, programMuls(program, 0, program.length))
  const rInverse = modInverse((1n << BigInt(limbBits * start.k)) % n, n)
  return [(start.read(ECM_SLOT_QX) * rInverse) % n, (start.read(ECM_SLOT_QZ) * rInverse) % n]
}

/** x^-1 mod n for gcd(x, n) = 1, by the extended Euclidean algorithm. */
function modInverse(x: bigint, n: bigint): bigint {
  let [r0, r1] = [x % n, n]
  let [s0, s1] = [1n, 0n]
  while (r1 !== 0n) {
    const q = r0 / r1
    ;[r0, r1] = [r1, r0 - q * r1]
    ;[s0, s1] = [s1, s0 - q * s1]
  }
  return ((s0 % n) + n) % n
}

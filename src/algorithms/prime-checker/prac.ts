// Stage 1 programs for ECM's kernel (wasm/prime/ecm.ts, ecmStage1): Montgomery's PRAC ("Evaluating
// recurrences of form X_(m+n) = f(X_m, X_n, X_(m-n)) via Lucas chains", 1992) multiplies a point by a prime n
// with x-only additions, which need the difference of their operands. It keeps n Q = d A + e B with
// C = A - B, starting from d = n - r, e = 2r - n (A = 2Q, B = Q) for r near n / golden ratio, and applies
// the first rule that fits until d = e = 1, when n Q = A + B. Near the golden ratio most steps are rule 3,
// one addition (6 multiplications) per factor of about 1.6, against the ladder's 11 per bit. The chain is
// computed on integers, once per prime, and the kernel replays its rules; of the r tried, the cheapest wins.

import { ECM_OP_DOUBLE, ECM_OP_END, ECM_OP_INIT, ECM_OP_SWAP } from './kernel.js'

/** Multiplications of each opcode (xAdd 6, xDbl 5), as ecmStage1 counts them. */
const COST = [6, 18, 11, 6, 11, 11, 23, 23, 23, 11, 5, 5]

const PHI = (1 + Math.sqrt(5)) / 2
/** How far from n / PHI the r tried go, each way. */
const R_SPREAD = 5

/** The cheapest chain for an odd prime n (or any odd n > 1 when some r near n / PHI is prime to it). */
function chain(n: number): number[] {
  const r0 = Math.round(n / PHI)
  let best: number[] | undefined
  let bestCost = Number.POSITIVE_INFINITY
  for (let r = r0 - R_SPREAD; r <= r0 + R_SPREAD; r++) {
    if (2 * r <= n || r >= n) continue
    const ops = chainFrom(n, r, bestCost)
    if (ops === undefined) continue
    best = ops
    bestCost = opsMuls(ops)
  }
  if (best === undefined) throw new RangeError(`no PRAC chain for ${n}`)
  return best
}

/**
 * The rules from d = n - r, e = 2r - n, or undefined when they end at d = e > 1 (gcd(n, r) > 1) or cost
 * `limit` multiplications or more (exported to test chains the cheapest-r choice would not make).
 */
export function chainFrom(n: number, r: number, limit = Number.POSITIVE_INFINITY): number[] | undefined {
  let d = n - r
  let e = 2 * r - n
  const ops = [ECM_OP_INIT]
  let muls = COST[ECM_OP_INIT] as number
  while (d !== e) {
    if (muls >= limit) return undefined
    let swap = 0
    if (d < e) {
      ;[d, e] = [e, d]
      swap = ECM_OP_SWAP
    }
    let rule: number
    if (4 * d <= 5 * e && (d + e) % 3 === 0) {
      rule = 1
      ;[d, e] = [(2 * d - e) / 3, (2 * e - d) / 3]
    } else if (4 * d <= 5 * e && (d - e) % 6 === 0) {
      rule = 2
      d = (d - e) / 2
    } else if (d <= 4 * e) {
      rule = 3
      d -= e
    } else if ((d - e) % 2 === 0) {
      rule = 4
      d = (d - e) / 2
    } else if (d % 2 === 0) {
      rule = 5
      d /= 2
    } else if (d % 3 === 0) {
      rule = 6
      d = d / 3 - e
    } else if ((d + e) % 3 === 0) {
      rule = 7
      d = (d - 2 * e) / 3
    } else if ((d - e) % 3 === 0) {
      rule = 8
      d = (d - e) / 3
    } else {
      rule = 9
      e /= 2
    }
    ops.push(rule + swap)
    muls += COST[rule] as number
  }
  if (d !== 1 || muls + (COST[ECM_OP_END] as number) >= limit) return undefined
  ops.push(ECM_OP_END)
  return ops
}

/** The program that multiplies by each prime factor of e >= 1 (trial division: e below 2^32). */
export function multiplierProgram(e: number): Uint8Array {
  const ops: number[] = []
  let m = e
  for (let p = 2; p * p <= m; p++) {
    while (m % p === 0) {
      ops.push(...primeOps(p))
      m /= p
    }
  }
  if (m > 1) ops.push(...primeOps(m))
  return Uint8Array.from(ops)
}

/** Stage 1 to b1: each prime p <= b1 as many times as its largest power up to b1. */
export function stage1Program(primes: number[], b1: number): Uint8Array {
  const ops: number[] = []
  for (const p of primes) {
    const once = primeOps(p)
    for (let q = p; q <= b1; q *= p) for (const op of once) ops.push(op)
  }
  return Uint8Array.from(ops)
}

function primeOps(p: number): number[] {
  return p === 2 ? [ECM_OP_DOUBLE] : chain(p)
}

/** Multiplications of program[from..to). */
export function programMuls(program: Uint8Array, from: number, to: number): number {
  return opsMuls(program.subarray(from, to))
}

function opsMuls(ops: ArrayLike<number>): number {
  let muls = 0
  for (let i = 0; i < ops.length; i++) muls += COST[(ops[i] as number) % ECM_OP_SWAP] as number
  return muls
}

// Pollard's rho with Brent's cycle detection (Brent 1980): in the kernel's 64-bit Montgomery form below 2^64,
// after a short Pollard p - 1 run and ECM's small curves (which split nearly every such number first), and on
// its multi-limb residues above, with the gcds and Brent's schedule here.
import { gcd } from './bigint-math.js'
import type { Budget } from './budget.js'
import {
  kernel,
  RHON_SLOT_C,
  RHON_SLOT_Q,
  RHON_SLOT_X,
  RHON_SLOT_Y,
  readSlot,
  setModulus,
  writeSlot,
} from './kernel.js'

/**
 * Steps per kernel call below 2^64, 40 times the expected count for two 32-bit factors; the budget is checked
 * between calls.
 */
const STEPS_64 = 1 << 22

/**
 * Bounds of the p - 1 run before rho below 2^64 (wasm/prime/pm1_64.ts), chosen by a same-process A/B on
 * balanced 64-bit semiprimes against other B1 and B2 (docs/benchmarks/prime-checker.md, run of 2026-11-21
 * 20:09 UTC). B2 is the end of the kernel's prime table.
 */
const PM1_B1 = 4000
const PM1_B2 = 65535

/**
 * ECM's curves and bounds below 2^64 (wasm/prime/ecm64.ts), after p - 1 and before rho, chosen on balanced
 * 64-bit semiprimes against rho alone and smaller B1 (docs/benchmarks/prime-checker.md, "Figures moved out
 * of code comments"); none needed more than 30 curves, and rho backs up the 40.
 */
const ECM_CURVES = 40
const ECM_B1 = 300
const ECM_B2 = 7500

/** A nontrivial divisor of the odd composite n < 2^64 (not a perfect power), or undefined at the deadline. */
export function splitRho64(n: bigint, budget: Budget): bigint | undefined {
  const quick = kernel.pminus1_64(n, PM1_B1, PM1_B2)
  if (quick !== 0n) return quick
  const found = kernel.ecm64(n, ECM_CURVES, ECM_B1, ECM_B2)
  if (found !== 0n) return found
  // A constant that fails (both cycles closing together) or runs long is replaced; each restart is
  // independent.
  for (let c = 1n; ; c++) {
    if (budget.timeIsUp()) return undefined
    const d = kernel.rho64(n, c, STEPS_64)
    if (d !== 0n && d !== n) return d
  }
}

/** Steps between two gcds. */
const BATCH = 256

/**
 * Up to maxSteps steps of rho on the odd composite n: a nontrivial divisor, or undefined when the steps or
 * the budget run out. Rho finds a prime p in about sqrt(p) steps, so this is for small factors; ECM follows.
 */
export function rhoBig(n: bigint, maxSteps: number, budget: Budget): bigint | undefined {
  let steps = 0
  for (let c = 1n; steps < maxSteps; c++) {
    const k = setModulus(n)
    const one = (1n << BigInt(32 * k)) % n
    writeSlot(RHON_SLOT_C, (c * one) % n)
    writeSlot(RHON_SLOT_Y, (2n * one) % n)
    writeSlot(RHON_SLOT_Q, one)
    let g = 1n
    for (let r = 1; g === 1n; r *= 2) {
      if (steps >= maxSteps) return undefined
      kernel.copySlot(RHON_SLOT_X, RHON_SLOT_Y)
      for (let done = 0; done < r; done += BATCH) {
        if (!budget.affords(4 * BATCH, k)) return undefined
        kernel.rhoAdvance(Math.min(BATCH, r - done))
      }
      for (let done = 0; done < r && g === 1n; done += BATCH) {
        if (!budget.affords(4 * BATCH, k)) return undefined
        kernel.rhoSave()
        kernel.rhoAccumulate(Math.min(BATCH, r - done))
        g = gcd(readSlot(RHON_SLOT_Q), n)
      }
      steps += 2 * r
    }
    if (g === n) g = replay(n)
    if (g !== n) return g
  }
  return undefined
}

/** The last batch's product reached 0 mod n: its steps one at a time find the divisor before that. */
function replay(n: bigint): bigint {
  for (;;) {
    kernel.rhoReplayStep()
    const g = gcd(readSlot(RHON_SLOT_Q), n)
    if (g !== 1n) return g
  }
}

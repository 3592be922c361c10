// Baillie-PSW above 2^64 on the kernel's multi-limb Montgomery arithmetic: a base-2 strong probable-prime
// test, a square check, then an extra strong Lucas test (Baillie-Wagstaff 1980, Grantham 2001). Only the
// constants that need a division (R mod n and its small multiples) are computed with BigInt, once per test.
import { bitLength, isqrt, jacobi } from './bigint-math.js'
import {
  BITS28,
  BPSWN_SLOT_EXPONENT,
  BPSWN_SLOT_MINUS_ONE,
  BPSWN_SLOT_MINUS_TWO,
  BPSWN_SLOT_ONE,
  BPSWN_SLOT_P,
  BPSWN_SLOT_TWO,
  kernel,
  type LimbBits,
  limbCount,
  setModulus,
  setModulus28,
  writeLimbs,
  writeLimbs28,
} from './kernel.js'

/**
 * The most 32-bit limbs (576 bits, about 173 digits) at which the test runs on montn: its operand scanning
 * has less work per product than mont28's column sums on short columns, measured with isBailliePSWKernel
 * (docs/benchmarks/prime-checker.md, run of 2026-11-21 19:10 UTC, and "Figures moved out of code comments").
 */
const BPSW_MONTN_MAX_LIMBS = 18

/**
 * Baillie-PSW core for an odd n >= 2^32 with no prime factor below a few hundred (the caller's trial
 * division).
 */
export function isBailliePSWCore(n: bigint): boolean {
  return isBailliePSWKernel(n, limbCount(n) <= BPSW_MONTN_MAX_LIMBS ? 32 : BITS28)
}

/** isBailliePSWCore on the given limb size: 32 for montn, 28 for mont28 (exported to test both). */
export function isBailliePSWKernel(n: bigint, limbBits: LimbBits): boolean {
  const on32 = limbBits === 32
  const k = on32 ? setModulus(n) : setModulus28(n)
  const writeSlot = on32
    ? (slot: number, x: bigint): void => writeLimbs(kernel.slotPtr(slot), x, k)
    : (slot: number, x: bigint): void => writeLimbs28(slot, x, k)
  // The exponents (below n) are plain 28-bit limbs in mont28's slot whichever arithmetic runs.
  const exponentLimbs = Math.ceil(bitLength(n) / BITS28)
  const one = (1n << BigInt(limbBits * k)) % n
  const two = (2n * one) % n
  writeSlot(BPSWN_SLOT_ONE, one)
  writeSlot(BPSWN_SLOT_MINUS_ONE, n - one)
  writeSlot(BPSWN_SLOT_TWO, two)
  writeSlot(BPSWN_SLOT_MINUS_TWO, n - two)

  const [d, s] = oddPart(n - 1n)
  writeLimbs28(BPSWN_SLOT_EXPONENT, d, exponentLimbs)
  if (kernel.sprp2N(bitLength(d), s, on32) === 0) return false
  // No P gives (P^2 - 4 / n) = -1 when n is a square.
  if (isSquare(n)) return false

  let p = 3n
  for (; ; p++) {
    const j = jacobi(p * p - 4n, n)
    if (j === -1) break
    if (j === 0) return false
  }
  writeSlot(BPSWN_SLOT_P, (p * one) % n)
  const [m, r] = oddPart(n + 1n)
  writeLimbs28(BPSWN_SLOT_EXPONENT, m, exponentLimbs)
  return kernel.extraStrongLucasN(bitLength(m), r, on32) === 1
}

function oddPart(x: bigint): [bigint, number] {
  let s = 0
  while (((x >> BigInt(s)) & 1n) === 0n) s++
  return [x >> BigInt(s), s]
}

/**
 * Squares are quadratic residues mod 64, 63, 65 and 11; those filters leave about 1 number in 170 for isqrt.
 */
function isSquare(n: bigint): boolean {
  for (const m of [64n, 63n, 65n, 11n]) if (!SQUARES_MOD.get(m)?.has(Number(n % m))) return false
  const root = isqrt(n)
  return root * root === n
}

const SQUARES_MOD = new Map<bigint, Set<number>>(
  [64, 63, 65, 11].map((m) => [BigInt(m), new Set(Array.from({ length: m }, (_, i) => (i * i) % m))]),
)

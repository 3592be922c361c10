// The two halves of Baillie-PSW (Baillie-Wagstaff 1980) on Montgomery residues modulo a multi-limb n: a base-2
// strong probable-prime test and an extra strong Lucas test (Grantham 2001), on mont28's residues or, up to
// the crossover measured in src/algorithms/prime-checker/bpsw.ts, montn's 32-bit ones: product scanning's
// per-column work only pays off on longer columns. The caller
// computes the few constants that need a division (R mod n and small multiples of it) and the exponents, and
// leaves them in slots of the chosen arithmetic; the exponent is always plain 28-bit limbs in mont28's slot.
import { BITS28, slot28 } from './mont28'
import { slotPtr } from './montn'
import { add, copy, equal, isZero, mul, onMont28, sqr, sub, useMont28 } from './montsel'

export const SLOT_ONE = 1
export const SLOT_MINUS_ONE = 2
export const SLOT_TWO = 3
export const SLOT_MINUS_TWO = 4
export const SLOT_P = 5
/** The exponent, as plain 28-bit limbs. */
export const SLOT_EXPONENT = 6
const SLOT_X = 7
const SLOT_W = 8
const SLOT_T = 9

// @ts-ignore: decorator
@inline
function exponentBit(e: usize, bit: i32): bool {
  return ((load<u32>(e + (usize(bit / BITS28) << 2)) >> u32(bit % BITS28)) & 1) != 0
}

// @ts-ignore: decorator
@inline
function slot(i: i32): usize {
  return onMont28() ? slot28(i) : slotPtr(i)
}

/** With n - 1 = d 2^s and d in the exponent slot: 2^d = 1, or 2^(d 2^r) = -1 for some r < s. */
export function sprp2N(dBits: i32, s: i32, on32: bool): bool {
  useMont28(!on32)
  const one = slot(SLOT_ONE)
  const minusOne = slot(SLOT_MINUS_ONE)
  const x = slot(SLOT_X)
  const e = slot28(SLOT_EXPONENT)
  copy(x, one)
  for (let bit = dBits - 1; bit >= 0; bit--) {
    sqr(x, x)
    // The base is 2, so the multiply of square-and-multiply is a doubling.
    if (exponentBit(e, bit)) add(x, x, x)
  }
  if (equal(x, one) || equal(x, minusOne)) return true
  for (let r = 1; r < s; r++) {
    sqr(x, x)
    if (equal(x, minusOne)) return true
    if (equal(x, one)) return false
  }
  return false
}

/**
 * With n + 1 = m 2^s and m in the exponent slot, P's Montgomery form in its slot and (P^2 - 4 / n) = -1:
 * U_m = 0 and V_m = +-2, or V_(m 2^r) = 0 for some r < s - 1. V_2k = V_k^2 - 2, V_2k+1 = V_k V_k+1 - P, and
 * U_m = 0 exactly when 2 V_m+1 = P V_m.
 */
export function extraStrongLucasN(mBits: i32, s: i32, on32: bool): bool {
  useMont28(!on32)
  const two = slot(SLOT_TWO)
  const minusTwo = slot(SLOT_MINUS_TWO)
  const p = slot(SLOT_P)
  const e = slot28(SLOT_EXPONENT)
  const v = slot(SLOT_X)
  const w = slot(SLOT_W)
  const t = slot(SLOT_T)
  copy(v, two)
  copy(w, p)
  for (let bit = mBits - 1; bit >= 0; bit--) {
    if (exponentBit(e, bit)) {
      mul(v, v, w)
      sub(v, v, p)
      sqr(w, w)
      sub(w, w, two)
    } else {
      mul(w, v, w)
      sub(w, w, p)
      sqr(v, v)
      sub(v, v, two)
    }
  }
  add(w, w, w)
  mul(t, p, v)
  if (equal(w, t) && (equal(v, two) || equal(v, minusTwo))) return true
  for (let r = 0; r + 1 < s; r++) {
    if (isZero(v)) return true
    sqr(v, v)
    sub(v, v, two)
  }
  return false
}

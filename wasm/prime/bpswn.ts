// The two halves of Baillie-PSW (Baillie-Wagstaff 1980) on Montgomery residues modulo a multi-limb n: a base-2
// strong probable-prime test and an extra strong Lucas test (Grantham 2001), on mont28's residues. The caller
// computes the few constants that need a division (R mod n and small multiples of it) and the exponents, and
// leaves them in slots.
import { add28, copy28, equal28, isZero28, mul28, slot28, sqr28, sub28 } from './mont28'

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
  return ((load<u32>(e + (usize(bit / 28) << 2)) >> u32(bit % 28)) & 1) != 0
}

/** With n - 1 = d 2^s and d in the exponent slot: 2^d = 1, or 2^(d 2^r) = -1 for some r < s. */
export function sprp2N(dBits: i32, s: i32): bool {
  const one = slot28(SLOT_ONE)
  const minusOne = slot28(SLOT_MINUS_ONE)
  const x = slot28(SLOT_X)
  const e = slot28(SLOT_EXPONENT)
  copy28(x, one)
  for (let bit = dBits - 1; bit >= 0; bit--) {
    sqr28(x, x)
    // The base is 2, so the multiply of square-and-multiply is a doubling.
    if (exponentBit(e, bit)) add28(x, x, x)
  }
  if (equal28(x, one) || equal28(x, minusOne)) return true
  for (let r = 1; r < s; r++) {
    sqr28(x, x)
    if (equal28(x, minusOne)) return true
    if (equal28(x, one)) return false
  }
  return false
}

/**
 * With n + 1 = m 2^s and m in the exponent slot, P's Montgomery form in its slot and (P^2 - 4 / n) = -1:
 * U_m = 0 and V_m = +-2, or V_(m 2^r) = 0 for some r < s - 1. V_2k = V_k^2 - 2, V_2k+1 = V_k V_k+1 - P, and
 * U_m = 0 exactly when 2 V_m+1 = P V_m.
 */
export function extraStrongLucasN(mBits: i32, s: i32): bool {
  const two = slot28(SLOT_TWO)
  const minusTwo = slot28(SLOT_MINUS_TWO)
  const p = slot28(SLOT_P)
  const e = slot28(SLOT_EXPONENT)
  const v = slot28(SLOT_X)
  const w = slot28(SLOT_W)
  const t = slot28(SLOT_T)
  copy28(v, two)
  copy28(w, p)
  for (let bit = mBits - 1; bit >= 0; bit--) {
    if (exponentBit(e, bit)) {
      mul28(v, v, w)
      sub28(v, v, p)
      sqr28(w, w)
      sub28(w, w, two)
    } else {
      mul28(w, v, w)
      sub28(w, w, p)
      sqr28(v, v)
      sub28(v, v, two)
    }
  }
  add28(w, w, w)
  mul28(t, p, v)
  if (equal28(w, t) && (equal28(v, two) || equal28(v, minusTwo))) return true
  for (let r = 0; r + 1 < s; r++) {
    if (isZero28(v)) return true
    sqr28(v, v)
    sub28(v, v, two)
  }
  return false
}

// The two halves of Baillie-PSW (Baillie-Wagstaff 1980) on Montgomery residues modulo a multi-limb n: a base-2
// strong probable-prime test and an extra strong Lucas test (Grantham 2001). The caller computes the few
// constants that need a division (R mod n and small multiples of it) and the exponents, and leaves them in slots.
import { addN, copyN, equalN, isZeroN, mulN, slotPtr, subModN } from './montn'

export const SLOT_ONE = 0
export const SLOT_MINUS_ONE = 1
export const SLOT_TWO = 2
export const SLOT_MINUS_TWO = 3
export const SLOT_P = 4
/** The exponent, as plain limbs. */
export const SLOT_EXPONENT = 5
const SLOT_X = 6
const SLOT_W = 7
const SLOT_T = 8

// @ts-ignore: decorator
@inline
function exponentBit(e: usize, bit: i32): bool {
  return ((load<u32>(e + (usize(bit >> 5) << 2)) >> u32(bit & 31)) & 1) != 0
}

/** With n - 1 = d 2^s and d in the exponent slot: 2^d = 1, or 2^(d 2^r) = -1 for some r < s. */
export function sprp2N(dBits: i32, s: i32): bool {
  const one = slotPtr(SLOT_ONE)
  const minusOne = slotPtr(SLOT_MINUS_ONE)
  const x = slotPtr(SLOT_X)
  const e = slotPtr(SLOT_EXPONENT)
  copyN(x, one)
  for (let bit = dBits - 1; bit >= 0; bit--) {
    mulN(x, x, x)
    // The base is 2, so the multiply of square-and-multiply is a doubling.
    if (exponentBit(e, bit)) addN(x, x, x)
  }
  if (equalN(x, one) || equalN(x, minusOne)) return true
  for (let r = 1; r < s; r++) {
    mulN(x, x, x)
    if (equalN(x, minusOne)) return true
    if (equalN(x, one)) return false
  }
  return false
}

/**
 * With n + 1 = m 2^s and m in the exponent slot, P's Montgomery form in its slot and (P^2 - 4 / n) = -1:
 * U_m = 0 and V_m = +-2, or V_(m 2^r) = 0 for some r < s - 1. V_2k = V_k^2 - 2, V_2k+1 = V_k V_k+1 - P, and
 * U_m = 0 exactly when 2 V_m+1 = P V_m.
 */
export function extraStrongLucasN(mBits: i32, s: i32): bool {
  const two = slotPtr(SLOT_TWO)
  const minusTwo = slotPtr(SLOT_MINUS_TWO)
  const p = slotPtr(SLOT_P)
  const e = slotPtr(SLOT_EXPONENT)
  const v = slotPtr(SLOT_X)
  const w = slotPtr(SLOT_W)
  const t = slotPtr(SLOT_T)
  copyN(v, two)
  copyN(w, p)
  for (let bit = mBits - 1; bit >= 0; bit--) {
    if (exponentBit(e, bit)) {
      mulN(v, v, w)
      subModN(v, v, p)
      mulN(w, w, w)
      subModN(w, w, two)
    } else {
      mulN(w, v, w)
      subModN(w, w, p)
      mulN(v, v, v)
      subModN(v, v, two)
    }
  }
  addN(w, w, w)
  mulN(t, p, v)
  if (equalN(w, t) && (equalN(v, two) || equalN(v, minusTwo))) return true
  for (let r = 0; r + 1 < s; r++) {
    if (isZeroN(v)) return true
    mulN(v, v, v)
    subModN(v, v, two)
  }
  return false
}

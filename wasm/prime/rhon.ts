// The inner loops of Pollard-Brent rho (Brent 1980) modulo a multi-limb n, on Montgomery residues. The caller
// runs Brent's schedule and takes the gcds, a few hundred steps apart.
import { copyN, mulN, addN, slotPtr, subModN } from './montn'

export const SLOT_C = 10
export const SLOT_X = 11
export const SLOT_Y = 12
export const SLOT_Q = 13
export const SLOT_SAVED = 14
const SLOT_T = 15

/** y = f(y) count times, f(y) = y^2 / R + c. */
export function rhoAdvance(count: i32): void {
  const y = slotPtr(SLOT_Y)
  const c = slotPtr(SLOT_C)
  for (let i = 0; i < count; i++) {
    mulN(y, y, y)
    addN(y, y, c)
  }
}

/** count times: y = f(y), q = q (x - y) / R. */
export function rhoAccumulate(count: i32): void {
  const x = slotPtr(SLOT_X)
  const y = slotPtr(SLOT_Y)
  const q = slotPtr(SLOT_Q)
  const c = slotPtr(SLOT_C)
  const t = slotPtr(SLOT_T)
  for (let i = 0; i < count; i++) {
    mulN(y, y, y)
    addN(y, y, c)
    subModN(t, x, y)
    mulN(q, q, t)
  }
}

/** Saves y, so that a batch whose product reached 0 mod n can be replayed. */
export function rhoSave(): void {
  copyN(slotPtr(SLOT_SAVED), slotPtr(SLOT_Y))
}

/** One replayed step: saved = f(saved), and the difference x - saved left in the q slot for a gcd. */
export function rhoReplayStep(): void {
  const s = slotPtr(SLOT_SAVED)
  mulN(s, s, s)
  addN(s, s, slotPtr(SLOT_C))
  subModN(slotPtr(SLOT_Q), slotPtr(SLOT_X), s)
}

// The Montgomery arithmetic a multi-limb caller (Baillie-PSW, ECM) chose for its modulus: montn's 32-bit
// limbs, or mont28's SIMD column sums, which pay off only on longer moduli. The caller sets the choice at its
// entry point; every operation below is inlined into the caller, and its branch is always predictable.
import { add28, copy28, equal28, isZero28, mul28, sqr28, sub28 } from './mont28'
import { addN, copyN, equalN, isZeroN, mulN, subModN } from './montn'

let ON28 = false

/** Picks mont28 (true) or montn (false) for the operations below. */
export function useMont28(on28: bool): void {
  ON28 = on28
}

// @ts-ignore: decorator
@inline
export function onMont28(): bool {
  return ON28
}

// @ts-ignore: decorator
@inline
export function mul(r: usize, a: usize, b: usize): void {
  if (ON28) mul28(r, a, b)
  else mulN(r, a, b)
}

// @ts-ignore: decorator
@inline
export function sqr(r: usize, a: usize): void {
  if (ON28) sqr28(r, a)
  else mulN(r, a, a)
}

// @ts-ignore: decorator
@inline
export function add(r: usize, a: usize, b: usize): void {
  if (ON28) add28(r, a, b)
  else addN(r, a, b)
}

// @ts-ignore: decorator
@inline
export function sub(r: usize, a: usize, b: usize): void {
  if (ON28) sub28(r, a, b)
  else subModN(r, a, b)
}

// @ts-ignore: decorator
@inline
export function copy(r: usize, a: usize): void {
  if (ON28) copy28(r, a)
  else copyN(r, a)
}

// @ts-ignore: decorator
@inline
export function equal(a: usize, b: usize): bool {
  return ON28 ? equal28(a, b) : equalN(a, b)
}

// @ts-ignore: decorator
@inline
export function isZero(a: usize): bool {
  return ON28 ? isZero28(a) : isZeroN(a)
}

// Elliptic curve method (Lenstra 1987) on Montgomery curves B y^2 = x^3 + A x^2 + x in X:Z coordinates
// (Montgomery 1987): stage 1 multiplies a point by every prime power up to B1 with the Montgomery ladder,
// stage 2 is the standard continuation with baby steps j Q and giant steps m D Q, D = 210, so that each prime
// m D +- j up to B2 costs two multiplications (Zimmermann-Dodson 2006, section 3). Residues are in the
// Montgomery form of montn; the caller picks the curve, computes (A + 2) / 4 and takes the gcds.
import { addN, copyN, mulN, slotPtr, subModN } from './montn'

export const SLOT_A24 = 20
/** The point: stage 1 multiplies it in place, stage 2 starts from it. */
export const SLOT_QX = 21
export const SLOT_QZ = 22
/** Stage 2's running product, whose gcd with n the caller takes. */
export const SLOT_ACC = 23
const R0X = 24
const R0Z = 25
const R1X = 26
const R1Z = 27
const DX = 28
const DZ = 29
const T1 = 30
const T2 = 31
const T3 = 32
const T4 = 33
const GX = 34
const GZ = 35
const HX = 36
const HZ = 37
const STEPX = 38
const STEPZ = 39
const JX = 40
const JZ = 41
const PREVX = 42
const PREVZ = 43
const TWOX = 44
const TWOZ = 45
const T5 = 46
const NEWX = 47
const NEWZ = 48
/** Baby steps: X, Z and X Z of j Q for the 24 odd j < 105 prime to 210, three slots each. */
const BABY = 50
export const BABY_COUNT: i32 = 24
export const D: u32 = 210

/** (X2:Z2) = 2 (X:Z): 2 multiplications and 2 squarings. Outputs may alias inputs. */
function xDbl(ox: i32, oz: i32, x: i32, z: i32): void {
  const s = slotPtr(T1)
  const d = slotPtr(T2)
  const t = slotPtr(T3)
  const u = slotPtr(T4)
  addN(s, slotPtr(x), slotPtr(z))
  mulN(s, s, s)
  subModN(d, slotPtr(x), slotPtr(z))
  mulN(d, d, d)
  subModN(t, s, d)
  mulN(u, slotPtr(SLOT_A24), t)
  addN(u, u, d)
  mulN(slotPtr(ox), s, d)
  mulN(slotPtr(oz), t, u)
}

/** (X:Z) of A + B from A, B and their difference (dx:dz), which must not alias the output. */
function xAdd(ox: i32, oz: i32, ax: i32, az: i32, bx: i32, bz: i32, dx: i32, dz: i32): void {
  const u = slotPtr(T1)
  const v = slotPtr(T2)
  const t = slotPtr(T3)
  subModN(u, slotPtr(ax), slotPtr(az))
  addN(t, slotPtr(bx), slotPtr(bz))
  mulN(u, u, t)
  addN(v, slotPtr(ax), slotPtr(az))
  subModN(t, slotPtr(bx), slotPtr(bz))
  mulN(v, v, t)
  addN(t, u, v)
  subModN(u, u, v)
  mulN(t, t, t)
  mulN(u, u, u)
  mulN(slotPtr(ox), slotPtr(dz), t)
  mulN(slotPtr(oz), slotPtr(dx), u)
}

/** (x:z) = e (x:z) for e >= 1 by the Montgomery ladder, keeping R1 - R0 = the input point. */
function ladder(e: u32, x: i32, z: i32): void {
  if (e == 1) return
  copyN(slotPtr(DX), slotPtr(x))
  copyN(slotPtr(DZ), slotPtr(z))
  copyN(slotPtr(R0X), slotPtr(x))
  copyN(slotPtr(R0Z), slotPtr(z))
  xDbl(R1X, R1Z, x, z)
  for (let bit = 30 - i32(clz(e)); bit >= 0; bit--) {
    if ((e >> u32(bit)) & 1) {
      xAdd(R0X, R0Z, R0X, R0Z, R1X, R1Z, DX, DZ)
      xDbl(R1X, R1Z, R1X, R1Z)
    } else {
      xAdd(R1X, R1Z, R0X, R0Z, R1X, R1Z, DX, DZ)
      xDbl(R0X, R0Z, R0X, R0Z)
    }
  }
  copyN(slotPtr(x), slotPtr(R0X))
  copyN(slotPtr(z), slotPtr(R0Z))
}

/**
 * Multiplies Q by the prime powers at primes[from..count) until about maxMuls multiplications are spent;
 * returns the index reached.
 */
export function ecmStage1(primes: usize, count: i32, from: i32, maxMuls: i32): i32 {
  let spent = 0
  let i = from
  while (i < count && spent < maxMuls) {
    const q = load<u32>(primes + (usize(i) << 2))
    ladder(q, SLOT_QX, SLOT_QZ)
    spent += 11 * (32 - i32(clz(q)))
    i++
  }
  return i
}

/** Baby steps j Q, D Q, and the giant steps G = m0 D Q and H = (m0 + 1) D Q; the product starts at 1. */
export function ecmStage2Setup(m0: u32, oneSlot: i32): void {
  copyN(slotPtr(SLOT_ACC), slotPtr(oneSlot))
  copyN(slotPtr(JX), slotPtr(SLOT_QX))
  copyN(slotPtr(JZ), slotPtr(SLOT_QZ))
  // (j - 2) Q for j = 1 is -Q, whose x is Q's.
  copyN(slotPtr(PREVX), slotPtr(SLOT_QX))
  copyN(slotPtr(PREVZ), slotPtr(SLOT_QZ))
  xDbl(TWOX, TWOZ, SLOT_QX, SLOT_QZ)
  let index = 0
  for (let j: u32 = 1; j < D / 2; j += 2) {
    if (j % 3 != 0 && j % 5 != 0 && j % 7 != 0) {
      const b = BABY + 3 * index
      copyN(slotPtr(b), slotPtr(JX))
      copyN(slotPtr(b + 1), slotPtr(JZ))
      mulN(slotPtr(b + 2), slotPtr(JX), slotPtr(JZ))
      index++
    }
    // (j + 2) Q = j Q + 2 Q, whose difference is (j - 2) Q.
    xAdd(T5, T4, JX, JZ, TWOX, TWOZ, PREVX, PREVZ)
    copyN(slotPtr(PREVX), slotPtr(JX))
    copyN(slotPtr(PREVZ), slotPtr(JZ))
    copyN(slotPtr(JX), slotPtr(T5))
    copyN(slotPtr(JZ), slotPtr(T4))
  }
  copyN(slotPtr(STEPX), slotPtr(SLOT_QX))
  copyN(slotPtr(STEPZ), slotPtr(SLOT_QZ))
  ladder(D, STEPX, STEPZ)
  copyN(slotPtr(GX), slotPtr(SLOT_QX))
  copyN(slotPtr(GZ), slotPtr(SLOT_QZ))
  ladder(m0 * D, GX, GZ)
  copyN(slotPtr(HX), slotPtr(SLOT_QX))
  copyN(slotPtr(HZ), slotPtr(SLOT_QZ))
  ladder((m0 + 1) * D, HX, HZ)
}

/**
 * For giant steps m in [from, to): multiplies the product by X_G Z_j - X_j Z_G for each baby j whose bit
 * is set in masks[m - base], which vanishes mod p when (m D +- j) Q is the identity mod p. Stops after about
 * maxMuls multiplications; returns the m reached.
 */
export function ecmStage2(masks: usize, base: u32, from: u32, to: u32, maxMuls: i32): u32 {
  const acc = slotPtr(SLOT_ACC)
  const xz = slotPtr(T5)
  const t = slotPtr(T4)
  const u = slotPtr(T3)
  let spent = 0
  let m = from
  while (m < to && spent < maxMuls) {
    let mask = load<u32>(masks + (usize(m - base) << 2))
    if (mask != 0) {
      mulN(xz, slotPtr(GX), slotPtr(GZ))
      spent++
      while (mask != 0) {
        const b = BABY + 3 * i32(ctz(mask))
        mask &= mask - 1
        // (X_G - X_j)(Z_G + Z_j) - X_G Z_G + X_j Z_j = X_G Z_j - X_j Z_G with one multiplication.
        subModN(t, slotPtr(GX), slotPtr(b))
        addN(u, slotPtr(GZ), slotPtr(b + 1))
        mulN(t, t, u)
        subModN(t, t, xz)
        addN(t, t, slotPtr(b + 2))
        mulN(acc, acc, t)
        spent += 2
      }
    }
    // (m + 2) D Q = (m + 1) D Q + D Q, difference m D Q.
    xAdd(NEWX, NEWZ, HX, HZ, STEPX, STEPZ, GX, GZ)
    copyN(slotPtr(GX), slotPtr(HX))
    copyN(slotPtr(GZ), slotPtr(HZ))
    copyN(slotPtr(HX), slotPtr(NEWX))
    copyN(slotPtr(HZ), slotPtr(NEWZ))
    spent += 6
    m++
  }
  return m
}

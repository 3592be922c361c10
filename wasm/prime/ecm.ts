// Elliptic curve method (Lenstra 1987) on Montgomery curves B y^2 = x^3 + A x^2 + x in X:Z coordinates
// (Montgomery 1987): stage 1 multiplies a point by every prime power up to B1 with PRAC's Lucas chains,
// stage 2 is the standard continuation with baby steps j Q and giant steps m D Q (Zimmermann-Dodson 2006,
// section 3), both normalised to Z = 1 by Montgomery's simultaneous inversion (1987), so that
// each prime m D +- j up to B2 costs one multiplication by x_(mD) - x_j. The giant steps go in chunks of
// CHUNK, each with one inversion, which the caller computes (it has BigInt). Residues are in the
// Montgomery form of montn or, for larger moduli, of mont28 (ecmArithmetic); the caller picks the curve,
// computes (A + 2) / 4 and takes the gcds.
import { PAD } from './mont28'
import { MAX_LIMBS, modulusPtr, slotPtr } from './montn'
import { add, copy, mul, onMont28, sqr, sub, useMont28 } from './montsel'

let BASE28: usize = 0
let STRIDE28: usize = 0

/**
 * Picks the arithmetic of the next curve, whose modulus the caller has set (setModulus or setModulus28, k limbs).
 * mont28's slots get their own layout, past montn's fixed one, with the zero pad limbs its column sums read;
 * the caller zeroes them.
 */
export function ecmArithmetic(on28: bool, k: i32): void {
  useMont28(on28)
  BASE28 = (modulusPtr() + usize(2 * MAX_LIMBS + 2) * 4 + 15) & ~15
  STRIDE28 = (usize(k + PAD) * 4 + 15) & ~15
}

/** Where slot i of the current arithmetic is. */
export function ecmSlot(i: i32): usize {
  return slot(i)
}

// @ts-ignore: decorator
@inline
function slot(i: i32): usize {
  return onMont28() ? BASE28 + usize(i) * STRIDE28 : slotPtr(i)
}

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
/** The caller's inverse of the last prefix product, for ecmNormalize. */
export const SLOT_INV = 49
/** Baby steps, at most MAX_BABIES: x (X until normalised), Z, and the prefix products of the Z. */
const MAX_BABIES = 240
export const BABY_X = 50
export const BABY_Z = BABY_X + MAX_BABIES
export const BABY_PREFIX = BABY_Z + MAX_BABIES
/** Giant steps of one chunk, laid out as the baby steps. */
export const CHUNK = 256
export const GIANT_X = BABY_PREFIX + MAX_BABIES
export const GIANT_Z = GIANT_X + CHUNK
export const GIANT_PREFIX = GIANT_Z + CHUNK
/** The first slot past the kernel's (the caller's SLOT_END). */
export const ECM_SLOTS = GIANT_PREFIX + CHUNK

/** Stage 2's D (210 or 2310), the odd j < D / 2 reached by the baby steps, and the babies stored. */
let D: u32 = 210
let J: u32 = 1
let BABIES: i32 = 0

/** (X2:Z2) = 2 (X:Z): 2 multiplications and 2 squarings. Outputs may alias inputs. */
function xDbl(ox: i32, oz: i32, x: i32, z: i32): void {
  const s = slot(T1)
  const d = slot(T2)
  const t = slot(T3)
  const u = slot(T4)
  add(s, slot(x), slot(z))
  sqr(s, s)
  sub(d, slot(x), slot(z))
  sqr(d, d)
  sub(t, s, d)
  mul(u, slot(SLOT_A24), t)
  add(u, u, d)
  mul(slot(ox), s, d)
  mul(slot(oz), t, u)
}

/** (X:Z) of A + B from A, B and their difference (dx:dz), which must not alias the output. */
function xAdd(ox: i32, oz: i32, ax: i32, az: i32, bx: i32, bz: i32, dx: i32, dz: i32): void {
  const u = slot(T1)
  const v = slot(T2)
  const t = slot(T3)
  sub(u, slot(ax), slot(az))
  add(t, slot(bx), slot(bz))
  mul(u, u, t)
  add(v, slot(ax), slot(az))
  sub(t, slot(bx), slot(bz))
  mul(v, v, t)
  add(t, u, v)
  sub(u, u, v)
  sqr(t, t)
  sqr(u, u)
  mul(slot(ox), slot(dz), t)
  mul(slot(oz), slot(dx), u)
}

/** (x:z) = e (x:z) for e >= 1 by the Montgomery ladder, keeping R1 - R0 = the input point. */
function ladder(e: u32, x: i32, z: i32): void {
  if (e == 1) return
  copy(slot(DX), slot(x))
  copy(slot(DZ), slot(z))
  copy(slot(R0X), slot(x))
  copy(slot(R0Z), slot(z))
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
  copy(slot(x), slot(R0X))
  copy(slot(z), slot(R0Z))
}

/** Opcodes of stage 1's programs (src/algorithms/prime-checker/prac.ts writes them). */
export const OP_END: u32 = 0
export const OP_DOUBLE: u32 = 10
export const OP_INIT: u32 = 11
/** Added to a rule's opcode: swap A and B (d and e) first. */
export const OP_SWAP: u32 = 16

/** Point registers of PRAC, two slots (X, Z) each. */
const PRAC0 = 24
const PRAC1 = 26
const PRAC2 = 28
const PRAC3 = 34
const PRAC4 = 36

/** Register o = p + q, given d = p - q (not aliasing o). */
// @ts-ignore: decorator
@inline
function add3(o: i32, p: i32, q: i32, d: i32): void {
  xAdd(o, o + 1, p, p + 1, q, q + 1, d, d + 1)
}

// @ts-ignore: decorator
@inline
function dbl(o: i32, p: i32): void {
  xDbl(o, o + 1, p, p + 1)
}

/**
 * Runs the stage 1 program at program[from..length): for each prime, a PRAC chain (Montgomery, "Evaluating
 * recurrences of form X_(m+n) = f(X_m, X_n, X_(m-n)) via Lucas chains", 1992) that multiplies Q by it.
 * A chain keeps n Q = d A + e B with C = A - B: OP_INIT sets A = 2Q, B = C = Q, each rule 1 to 9 (numbered as
 * in prac.ts) shrinks d and e, and OP_END, at d = e = 1, sets Q = A + B. OP_DOUBLE doubles Q (the prime 2).
 * Stops at the end of a chain once about maxMuls multiplications are spent; returns the position reached.
 */
export function ecmStage1(program: usize, length: i32, from: i32, maxMuls: i32): i32 {
  let a = PRAC0
  let b = PRAC1
  let c = PRAC2
  let s = PRAC3
  let t = PRAC4
  let spent = 0
  let i = from
  while (i < length) {
    let op = u32(load<u8>(program + usize(i)))
    i++
    if (op >= OP_SWAP) {
      const x = a
      a = b
      b = x
      op -= OP_SWAP
    }
    if (op == OP_END) {
      add3(SLOT_QX, a, b, c)
      spent += 6
    } else if (op == OP_DOUBLE) {
      dbl(SLOT_QX, SLOT_QX)
      spent += 5
    } else if (op == OP_INIT) {
      dbl(a, SLOT_QX)
      copy(slot(b), slot(SLOT_QX))
      copy(slot(b + 1), slot(SLOT_QZ))
      copy(slot(c), slot(SLOT_QX))
      copy(slot(c + 1), slot(SLOT_QZ))
      spent += 5
    } else if (op == 1) {
      // A' = 2A + B, B' = A + 2B, C' = C.
      add3(s, a, b, c)
      add3(t, s, a, b)
      add3(b, s, b, a)
      const x = a
      a = t
      t = x
      spent += 18
    } else if (op == 2 || op == 4) {
      // A' = 2A, B' = A + B, C' = C.
      add3(b, a, b, c)
      dbl(a, a)
      spent += 11
    } else if (op == 3) {
      // A' = A, B' = A + B, C' = -B (the same x).
      add3(s, a, b, c)
      const x = c
      c = b
      b = s
      s = x
      spent += 6
    } else if (op == 5) {
      // A' = 2A, B' = B, C' = A + C.
      add3(c, a, c, b)
      dbl(a, a)
      spent += 11
    } else if (op == 6) {
      // A' = 3A, B' = 3A + B, C' = -B.
      add3(s, a, b, c)
      dbl(t, a)
      add3(s, t, s, c)
      add3(t, t, a, a)
      const x = a
      const y = c
      a = t
      c = b
      b = s
      s = x
      t = y
      spent += 23
    } else if (op == 7 || op == 8) {
      // Both: A' = 3A. Rule 7: B' = 2A + B, C' = C. Rule 8: B' = A + B, C' = A + C.
      add3(s, a, b, c)
      if (op == 7) add3(s, s, a, b)
      else add3(c, a, c, b)
      dbl(t, a)
      add3(t, t, a, a)
      const x = a
      const y = b
      a = t
      b = s
      s = x
      t = y
      spent += 23
    } else {
      // Rule 9: B' = 2B, C' = C - B.
      add3(c, c, b, a)
      dbl(b, b)
      spent += 11
    }
    // The registers are locals: stop only between chains.
    if ((op == OP_END || op == OP_DOUBLE) && spent >= maxMuls) break
  }
  return i
}

function gcdU32(a: u32, b: u32): u32 {
  while (b != 0) {
    const t = a % b
    a = b
    b = t
  }
  return a
}

/**
 * Starts stage 2 with D = d: the product is 1 (the Montgomery form in oneSlot), STEP = D Q, G = m0 D Q and
 * H = (m0 + 1) D Q, and the baby steps from j = 1 (ecmBabySteps).
 */
export function ecmStage2Setup(d: u32, m0: u32, oneSlot: i32): void {
  D = d
  J = 1
  BABIES = 0
  copy(slot(SLOT_ACC), slot(oneSlot))
  copy(slot(JX), slot(SLOT_QX))
  copy(slot(JZ), slot(SLOT_QZ))
  // (j - 2) Q for j = 1 is -Q, whose x is Q's.
  copy(slot(PREVX), slot(SLOT_QX))
  copy(slot(PREVZ), slot(SLOT_QZ))
  xDbl(TWOX, TWOZ, SLOT_QX, SLOT_QZ)
  copy(slot(STEPX), slot(SLOT_QX))
  copy(slot(STEPZ), slot(SLOT_QZ))
  ladder(D, STEPX, STEPZ)
  copy(slot(GX), slot(SLOT_QX))
  copy(slot(GZ), slot(SLOT_QZ))
  ladder(m0 * D, GX, GZ)
  copy(slot(HX), slot(SLOT_QX))
  copy(slot(HZ), slot(SLOT_QZ))
  ladder((m0 + 1) * D, HX, HZ)
}

/**
 * Stores j Q for the odd j < D / 2 prime to D, with the prefix products of their Z, until about maxMuls
 * multiplications are spent; returns the number stored once every j is done, else -1.
 */
export function ecmBabySteps(maxMuls: i32): i32 {
  let spent = 0
  while (J < D / 2) {
    if (spent >= maxMuls) return -1
    if (gcdU32(J, D) == 1) {
      storeWithPrefix(BABY_X, BABY_Z, BABY_PREFIX, BABIES, JX, JZ)
      BABIES++
      spent++
    }
    // (j + 2) Q = j Q + 2 Q, whose difference is (j - 2) Q.
    xAdd(T5, T4, JX, JZ, TWOX, TWOZ, PREVX, PREVZ)
    copy(slot(PREVX), slot(JX))
    copy(slot(PREVZ), slot(JZ))
    copy(slot(JX), slot(T5))
    copy(slot(JZ), slot(T4))
    spent += 6
    J += 2
  }
  return BABIES
}

/** Entry i of a table: (X:Z) from slots (x, z), and the product of the Z of entries 0 to i. */
function storeWithPrefix(xs: i32, zs: i32, prefix: i32, i: i32, x: i32, z: i32): void {
  copy(slot(xs + i), slot(x))
  copy(slot(zs + i), slot(z))
  if (i == 0) copy(slot(prefix), slot(z))
  else mul(slot(prefix + i), slot(prefix + i - 1), slot(z))
}

/**
 * Stores the giant steps m D Q of a chunk's entries [from, count) with their prefix products, advancing G and H,
 * until about maxMuls multiplications are spent; returns the entry reached.
 */
export function ecmGiantSteps(from: i32, count: i32, maxMuls: i32): i32 {
  let spent = 0
  let i = from
  while (i < count && spent < maxMuls) {
    storeWithPrefix(GIANT_X, GIANT_Z, GIANT_PREFIX, i, GX, GZ)
    // (m + 2) D Q = (m + 1) D Q + D Q, difference m D Q.
    xAdd(NEWX, NEWZ, HX, HZ, STEPX, STEPZ, GX, GZ)
    copy(slot(GX), slot(HX))
    copy(slot(GZ), slot(HZ))
    copy(slot(HX), slot(NEWX))
    copy(slot(HZ), slot(NEWZ))
    spent += 7
    i++
  }
  return i
}

/**
 * x_i = X_i / Z_i for the entries [0, count) of a table, given the inverse of the last prefix product in
 * SLOT_INV: walking down, that inverse times the prefix below entry i is 1 / Z_i, and times Z_i it becomes
 * the inverse of that prefix (3 multiplications an entry).
 */
export function ecmNormalize(xs: i32, zs: i32, prefix: i32, count: i32): void {
  const inv = slot(SLOT_INV)
  const t = slot(T1)
  for (let i = count - 1; i > 0; i--) {
    mul(t, inv, slot(prefix + i - 1))
    mul(slot(xs + i), slot(xs + i), t)
    mul(inv, inv, slot(zs + i))
  }
  mul(slot(xs), slot(xs), inv)
}

/**
 * For a chunk's normalised giant steps [from, count): multiplies the product by x_G - x_j for each baby j whose
 * bit is set in the entry's `words` 32-bit words of masks; it vanishes mod p when (m D +- j) Q is the identity
 * mod p. Stops after about maxMuls multiplications; returns the entry reached.
 */
export function ecmStage2(masks: usize, words: i32, from: i32, count: i32, maxMuls: i32): i32 {
  const acc = slot(SLOT_ACC)
  const t = slot(T1)
  let spent = 0
  let i = from
  while (i < count && spent < maxMuls) {
    const x = slot(GIANT_X + i)
    for (let w = 0; w < words; w++) {
      let mask = load<u32>(masks + (usize(i * words + w) << 2))
      while (mask != 0) {
        const b = BABY_X + 32 * w + i32(ctz(mask))
        mask &= mask - 1
        sub(t, x, slot(b))
        mul(acc, acc, t)
        spent++
      }
    }
    spent++
    i++
  }
  return i
}

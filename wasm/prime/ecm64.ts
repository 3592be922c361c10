// Lenstra's elliptic curve method for n < 2^64 in 64-bit Montgomery form (mont64.ts), on Montgomery curves
// B y^2 = x^3 + A x^2 + x with x-only arithmetic (Montgomery 1987, "Speeding the Pollard and elliptic curve
// methods of factorization", section 10) and Suyama's parametrisation, whose group orders are divisible by 12.
// Stage 1 multiplies a point by every prime power up to b1; stage 2 pairs giant steps m D Q with baby steps
// j Q, j coprime to D, and multiplies up X_mD Z_j - X_j Z_mD, which vanishes mod p when the order of Q divides
// m D +- j. For the two 32-bit factors of a balanced 64-bit semiprime a curve costs a few thousand products
// and a handful of curves usually suffice, where rho needs about 2^17.
import { add64, mul64, ONE, setup64, sqr64, sub64, toMont64 } from './mont64'
import { gcd64 } from './rho64'
import { largestPower, ODD_PRIMES, oddPrime } from './trial64'

/** The giant step: 2^2 3 5, with the baby steps j < D / 2 coprime to it. */
const D: u32 = 60
const BABY_COUNT = 8
/** Baby-step points j Q, X at index * 16, Z at index * 16 + 8, for j = 1, 7, 11, ..., 29. */
const BABY = memory.data(BABY_COUNT * 16, 8)
/** For odd j < D / 2, the index of j among the baby steps, or -1 when j shares a factor with D. */
const BABY_INDEX = memory.data(D / 2, 1)
let babyReady = false

/** (A + 2) / 4 in Montgomery form. */
let a24: u64 = 0
/** The point being multiplied, and the result of ladder(). */
let px: u64 = 0
let pz: u64 = 0
let rx: u64 = 0
let rz: u64 = 0
/** ladder() also leaves (k + 1) P here. */
let sx: u64 = 0
let sz: u64 = 0
/** Scratch results of double() and add(). */
let ox: u64 = 0
let oz: u64 = 0

/** 2 (x : z) into (ox : oz). */
// @ts-ignore: decorator
@inline
function double(x: u64, z: u64): void {
  const s = sqr64(add64(x, z))
  const d = sqr64(sub64(x, z))
  const t = sub64(s, d)
  ox = mul64(s, d)
  oz = mul64(t, add64(d, mul64(a24, t)))
}

/** P + Q into (ox : oz), from P, Q and P - Q. */
// @ts-ignore: decorator
@inline
function add(x1: u64, z1: u64, x2: u64, z2: u64, xd: u64, zd: u64): void {
  const u = mul64(sub64(x1, z1), add64(x2, z2))
  const v = mul64(add64(x1, z1), sub64(x2, z2))
  ox = mul64(zd, sqr64(add64(u, v)))
  oz = mul64(xd, sqr64(sub64(u, v)))
}

/** k P into (rx : rz) and (k + 1) P into (sx : sz), for k >= 1, by Montgomery's ladder. */
function ladder(k: u64): void {
  let x0 = px
  let z0 = pz
  double(px, pz)
  let x1 = ox
  let z1 = oz
  for (let bit = 62 - i32(clz(k)); bit >= 0; bit--) {
    add(x0, z0, x1, z1, px, pz)
    if (((k >> u64(bit)) & 1) != 0) {
      x0 = ox
      z0 = oz
      double(x1, z1)
      x1 = ox
      z1 = oz
    } else {
      x1 = ox
      z1 = oz
      double(x0, z0)
      x0 = ox
      z0 = oz
    }
  }
  rx = x0
  rz = z0
  sx = x1
  sz = z1
}

/** a^-1 mod the odd n for gcd(a, n) = 1, by the binary extended Euclidean algorithm on plain residues. */
function inverse(a: u64, n: u64): u64 {
  let u = a
  let v = n
  let x1: u64 = 1
  let x2: u64 = 0
  while (u != 1 && v != 1) {
    while ((u & 1) == 0) {
      u >>= 1
      x1 = half(x1, n)
    }
    while ((v & 1) == 0) {
      v >>= 1
      x2 = half(x2, n)
    }
    if (u >= v) {
      u -= v
      x1 = x1 >= x2 ? x1 - x2 : x1 - x2 + n
    } else {
      v -= u
      x2 = x2 >= x1 ? x2 - x1 : x2 - x1 + n
    }
  }
  return u == 1 ? x1 : x2
}

/** x / 2 mod the odd n, for x < n: (x + n) / 2 without overflowing when x is odd. */
// @ts-ignore: decorator
@inline
function half(x: u64, n: u64): u64 {
  return (x & 1) == 0 ? x >> 1 : (x >> 1) + (n >> 1) + 1
}

function prepareBaby(): void {
  for (let j: u32 = 0; j < D / 2; j++) store<i8>(BABY_INDEX + j, -1)
  let index = 0
  for (let j: u32 = 1; j < D / 2; j += 2) {
    if (j % 3 == 0 || j % 5 == 0) continue
    store<i8>(BABY_INDEX + j, i8(index))
    index++
  }
  babyReady = true
}

/**
 * Up to `curves` curves (Suyama's sigma = 6, 7, ...) with bounds b1 < b2 <= 65535 on the odd composite
 * n < 2^64: a nontrivial divisor, or 0 when every curve failed.
 */
export function ecm64(n: u64, curves: u32, b1: u32, b2: u32): u64 {
  // Stage 2 starts at the giant step nearest b1, which must be at least D: so b1 is at least D / 2.
  if (b1 < D / 2) b1 = D / 2
  setup64(n)
  if (!babyReady) prepareBaby()
  for (let c: u32 = 0; c < curves; c++) {
    const g = curve(n, u64(6 + c), b1, b2)
    if (g != 1 && g != n) return g
  }
  return 0
}

/** One curve: gcd(n, the stage-2 product), 1 when it found nothing, n when every factor came out at once. */
function curve(n: u64, sigma: u64, b1: u32, b2: u32): u64 {
  // Suyama: u = sigma^2 - 5, v = 4 sigma, x0 = u^3, z0 = v^3, (A + 2) / 4 = (v - u)^3 (3u + v) / (16 u^3 v).
  const u = toMont64(sigma * sigma - 5)
  const v = toMont64(4 * sigma)
  const u3 = mul64(sqr64(u), u)
  const vu = sub64(v, u)
  const num = mul64(mul64(sqr64(vu), vu), add64(add64(add64(u, u), u), v))
  const den = mul64(toMont64(16), mul64(u3, v))
  // den in plain form is its Montgomery product with plain 1.
  const denPlain = mul64(den, 1)
  const g = gcd64(denPlain, n)
  if (g != 1) return g
  a24 = mul64(num, toMont64(inverse(denPlain, n)))
  px = u3
  pz = mul64(sqr64(v), v)
  // Stage 1: 2^e, then each odd prime power, up to b1.
  for (let q: u32 = 2; q <= b1; q <<= 1) {
    double(px, pz)
    px = ox
    pz = oz
  }
  let i = 0
  for (; i < ODD_PRIMES; i++) {
    const p = oddPrime(i)
    if (p > b1) break
    ladder(largestPower(p, b1))
    px = rx
    pz = rz
  }
  let found = gcd64(pz, n)
  if (found != 1) return found
  // Stage 2. Baby steps j Q for odd j < D / 2 coprime to D: 1, 3, 5, ... by adding 2Q, keeping the right ones.
  double(px, pz)
  const x2 = ox
  const z2 = oz
  let xPrev = px
  let zPrev = pz
  add(x2, z2, px, pz, px, pz)
  let xj = ox
  let zj = oz
  store<u64>(BABY, px)
  store<u64>(BABY + 8, pz)
  for (let j: u32 = 3; j < D / 2; j += 2) {
    const index = load<i8>(BABY_INDEX + j)
    if (index >= 0) {
      store<u64>(BABY + (usize(index) << 4), xj)
      store<u64>(BABY + (usize(index) << 4) + 8, zj)
    }
    // (j + 2) Q = j Q + 2 Q, with difference (j - 2) Q.
    add(xj, zj, x2, z2, xPrev, zPrev)
    xPrev = xj
    zPrev = zj
    xj = ox
    zj = oz
  }
  // Giant steps: G_m = m D Q from the ladder on D Q, then G_(m+1) = G_m + D Q with difference G_(m-1).
  ladder(u64(D))
  const xd = rx
  const zd = rz
  let m = (b1 + D / 2) / D
  if (m == 0) m = 1
  px = xd
  pz = zd
  ladder(u64(m))
  let xg = rx
  let zg = rz
  let xgPrev: u64 = 0
  let zgPrev: u64 = 0
  // G_(m-1) for the first step: the ladder's k P and (k + 1) P give G_m and G_(m+1); step from there.
  let xgNext = sx
  let zgNext = sz
  let product = ONE
  for (; i < ODD_PRIMES; i++) {
    const q = oddPrime(i)
    if (q > b2) break
    // Giant steps until q is within D / 2 of m D.
    while (q > m * D + D / 2) {
      xgPrev = xg
      zgPrev = zg
      xg = xgNext
      zg = zgNext
      m++
      add(xg, zg, xd, zd, xgPrev, zgPrev)
      xgNext = ox
      zgNext = oz
    }
    const j = q > m * D ? q - m * D : m * D - q
    const index = load<i8>(BABY_INDEX + j)
    const at = BABY + (usize(index) << 4)
    product = mul64(product, sub64(mul64(xg, load<u64>(at + 8)), mul64(load<u64>(at), zg)))
  }
  found = gcd64(product, n)
  return found
}

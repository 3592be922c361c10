// Trial division of n < 2^64 by the odd primes below 2^16 with no division: odd d divides n exactly when
// n d^-1 mod 2^64 <= (2^64 - 1) / d (Granlund and Montgomery 1994, section 9). One multiply and one compare
// per prime, where BigInt remainders by groups of primes cost about 25 ns a prime.

const LIMIT: i32 = 65536
/** The odd primes below LIMIT. */
const COUNT = 6541
const PRIMES = memory.data(COUNT * 4, 4)
const INVERSES = memory.data(COUNT * 8, 8)
const BOUNDS = memory.data(COUNT * 8, 8)
/** The most 32-bit limbs of a number trialFactorLimbs takes. */
export const TRIAL_LIMBS = 5
/** 2^(32 k) mod p for 1 <= k < TRIAL_LIMBS, at ((k - 1) * COUNT + i) * 4 for the i-th odd prime. */
const LIMB_POWERS = memory.data((TRIAL_LIMBS - 1) * COUNT * 4, 4)
/** The number trialFactorLimbs divides, little-endian 32-bit limbs. */
const TRIAL_N = memory.data(TRIAL_LIMBS * 4, 8)
let ready = false

/** Sieves the odd primes below LIMIT and their inverses and bounds, once, on the first call. */
function prepare(): void {
  const composite = memory.data(LIMIT)
  let count = 0
  for (let d = 3; d < LIMIT; d += 2) {
    if (load<u8>(composite + d) != 0) continue
    if (d < 256) for (let j = d * d; j < LIMIT; j += 2 * d) store<u8>(composite + j, 1)
    // Newton's iteration doubles the correct low bits of d^-1 mod 2^64: d d = 1 (mod 8), then 6, ..., 96 bits.
    let x = u64(d)
    for (let i = 0; i < 5; i++) x *= 2 - u64(d) * x
    store<u32>(PRIMES + (usize(count) << 2), d)
    store<u64>(INVERSES + (usize(count) << 3), x)
    store<u64>(BOUNDS + (usize(count) << 3), u64.MAX_VALUE / u64(d))
    const limb = (u64(1) << 32) % u64(d)
    let power = limb
    for (let k = 1; k < TRIAL_LIMBS; k++) {
      store<u32>(LIMB_POWERS + ((usize(k - 1) * COUNT + usize(count)) << 2), u32(power))
      power = (power * limb) % u64(d)
    }
    count++
  }
  ready = true
}

/** The i-th odd prime (3, 5, 7, ...) for i < ODD_PRIMES, below 2^16. */
export const ODD_PRIMES = COUNT

export function oddPrime(i: i32): u32 {
  if (!ready) prepare()
  return load<u32>(PRIMES + (usize(i) << 2))
}

/** The largest power of the prime p that is at most bound (p <= bound): stage 1's exponent for p. */
// @ts-ignore: decorator
@inline
export function largestPower(p: u32, bound: u32): u64 {
  let q = u64(p)
  while (q * u64(p) <= u64(bound)) q *= u64(p)
  return q
}

/** The smallest odd prime p >= from (below 2^16) that divides n with p^2 <= n, or 0 when there is none. */
export function trialFactor64(n: u64, from: u32): u32 {
  if (!ready) prepare()
  for (let i = 0; i < COUNT; i++) {
    const p = load<u32>(PRIMES + (usize(i) << 2))
    if (p < from) continue
    if (u64(p) * u64(p) > n) return 0
    if (n * load<u64>(INVERSES + (usize(i) << 3)) <= load<u64>(BOUNDS + (usize(i) << 3))) return p
  }
  return 0
}

export function trialLimbsPtr(): usize {
  return TRIAL_N
}

/**
 * The smallest odd prime p >= from (below 2^16) that divides the `limbs`-limb number at trialLimbsPtr(), or 0.
 * The limbs times 2^(32 k) mod p sum to below 2^51, a number with n's residue mod p, tested as in trialFactor64.
 */
export function trialFactorLimbs(limbs: i32, from: u32): u32 {
  if (!ready) prepare()
  for (let i = 0; i < COUNT; i++) {
    const p = load<u32>(PRIMES + (usize(i) << 2))
    if (p < from) continue
    let sum = u64(load<u32>(TRIAL_N))
    for (let k = 1; k < limbs; k++) {
      const power = load<u32>(LIMB_POWERS + ((usize(k - 1) * COUNT + usize(i)) << 2))
      sum += u64(load<u32>(TRIAL_N + (usize(k) << 2))) * u64(power)
    }
    if (sum * load<u64>(INVERSES + (usize(i) << 3)) <= load<u64>(BOUNDS + (usize(i) << 3))) return p
  }
  return 0
}

// Loads the WebAssembly kernel built from wasm/prime (npm run build:wasm) and moves integers in and out of
// its memory. Loading is synchronous at import, so every worker thread has it before its first run.
import { readFileSync } from 'node:fs'
import { bitLength } from './bigint-math.js'

/** The same relative path from src/algorithms/prime-checker (tsx) and dist/algorithms/prime-checker (tsc). */
const WASM_URL = new URL('../../../wasm/build/prime.wasm', import.meta.url)

// The ES2022 lib and Node 20's types do not declare WebAssembly; this is the little of it used here.
interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}

interface WasmApi {
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { exports: unknown }
}

const { WebAssembly } = globalThis as unknown as { WebAssembly: WasmApi }

export interface KernelExports {
  memory: WasmMemory
  isPrime64(n: bigint): number
  isSquare64(n: bigint): number
  gcd64(a: bigint, b: bigint): bigint
  rho64(n: bigint, c: bigint, maxSteps: number): bigint
  pminus1_64(n: bigint, b1: number, b2: number): bigint
  ecm64(n: bigint, curves: number, b1: number, b2: number): bigint
  trialFactor64(n: bigint, from: number): number
  trialLimbsPtr(): number
  trialFactorLimbs(limbs: number, from: number): number
  setModulus(k: number): void
  modulusPtr(): number
  slotPtr(i: number): number
  limbs(): number
  mulN(r: number, a: number, b: number): void
  addN(r: number, a: number, b: number): void
  copySlot(dst: number, src: number): void
  setModulus28(k: number): void
  slot28(i: number): number
  mul28(r: number, a: number, b: number): void
  sqr28(r: number, a: number): void
  sprp2N(dBits: number, s: number, on32: boolean): number
  extraStrongLucasN(mBits: number, s: number, on32: boolean): number
  rhoAdvance(count: number): void
  rhoAccumulate(count: number): void
  rhoSave(): void
  rhoReplayStep(): void
  ecmArithmetic(on28: boolean, k: number): void
  ecmSlot(i: number): number
  ecmStage1(primes: number, count: number, from: number, maxMuls: number): number
  ecmStage2Setup(d: number, m0: number, oneSlot: number): void
  ecmBabySteps(maxMuls: number): number
  ecmGiantSteps(from: number, count: number, maxMuls: number): number
  ecmNormalize(xs: number, zs: number, prefix: number, count: number): void
  ecmStage2(masks: number, words: number, from: number, count: number, maxMuls: number): number
  qsPrimes(): number
  qsRoot1(): number
  qsRoot2(): number
  qsLogs(): number
  qsCandidates(): number
  qsSieve(width: number, first: number, count: number, init: number): number
  qsHits(): number
  qsDividing(j: number, count: number): number
  qsResieve(width: number, from: number, count: number, found: number): number
  qsDividingResieved(j: number, c: number, from: number): number
  qsSqrts(): number
  qsKn(): number
  qsLegendre(limbs: number, count: number): void
  qsFactorBase(limbs: number, size: number): number
  qsAIndices(): number
  qsEliminate(base: number, rows: number, stride: number, from: number, to: number, pivoted: number): void
  qsMergeBytes(
    rows: number,
    columns: number,
    maxWeight: number,
    arenaWords: number,
    colWords: number,
    logCap: number,
  ): number
  qsMergeInit(
    base: number,
    rows: number,
    columns: number,
    maxWeight: number,
    track: number,
    arenaWords: number,
    colWords: number,
    logCap: number,
  ): void
  qsMergeRun(work: number): number
  qsMergeLive(): number
  qsMergeLog(): number
  qsMergeLogLength(): number
  qsMergeRowOffsets(): number
  qsMergeRowLengths(): number
  qsMergeWeights(): number
  qsMergeArena(): number
  qsSetPolynomial(a: bigint, b: bigint, c: bigint, s: number): void
  qsRelation(j: number, count: number, half: number, largeBound: number): number
  qsCofactor(): number
  qsNegative(): number
  qsAPrimes(): number
  qsGammas(): number
  qsNewA(size: number, s: number, half: number, limbs: number): void
  qsTerms(): number
  qsNextB(size: number, v: number, plus: boolean): void
}

function load(): KernelExports {
  let bytes: Buffer
  try {
    bytes = readFileSync(WASM_URL)
  } catch (error) {
    throw new Error(
      `PrimeChecker kernel missing at ${WASM_URL.pathname}: run \`npm run build:wasm\` (part of build and pretest)`,
      { cause: error },
    )
  }
  const module = new WebAssembly.Module(bytes)
  const imports = {
    env: {
      abort(): never {
        throw new Error('PrimeChecker kernel aborted')
      },
    },
  }
  return new WebAssembly.Instance(module, imports).exports as unknown as KernelExports
}

export const kernel = load()

/** The bound of the kernel's 64-bit functions (isPrime64, rho64, trialFactor64, ...). */
export const LIMIT_64 = 1n << 64n

/**
 * A layout constant of the kernel, read from the global that wasm/prime/index.ts exports for it, so that the
 * TypeScript side never holds a copy that could drift from the AssemblyScript one.
 */
function constant(name: string): number {
  const value = (kernel as unknown as Record<string, { value?: unknown } | undefined>)[name]?.value
  if (typeof value !== 'number') {
    throw new Error(`PrimeChecker kernel exports no constant ${name}: run \`npm run build:wasm\``)
  }
  return value
}

/** The most 32-bit limbs a multi-limb modulus may have (montn.ts): 32768 bits. */
export const MAX_LIMBS = constant('MAX_LIMBS')

/** The sieve kernel's static arrays (qs.ts): sieve bytes, factor-base primes, candidates. */
export const QS_MAX_WIDTH = constant('QS_MAX_WIDTH')
export const QS_MAX_PRIMES = constant('QS_MAX_PRIMES')
export const QS_MAX_CANDIDATES = constant('QS_MAX_CANDIDATES')
export const QS_MAX_A_PRIMES = constant('QS_MAX_A_PRIMES')
export const QS_MAX_KN_LIMBS = constant('QS_MAX_KN_LIMBS')

/** trialFactorLimbs' most 32-bit limbs (trial64.ts). */
export const TRIAL_LIMBS = constant('TRIAL_LIMBS')

/** Slots of the Baillie-PSW kernel (bpswn.ts). */
export const BPSWN_SLOT_ONE = constant('BPSWN_SLOT_ONE')
export const BPSWN_SLOT_MINUS_ONE = constant('BPSWN_SLOT_MINUS_ONE')
export const BPSWN_SLOT_TWO = constant('BPSWN_SLOT_TWO')
export const BPSWN_SLOT_MINUS_TWO = constant('BPSWN_SLOT_MINUS_TWO')
export const BPSWN_SLOT_P = constant('BPSWN_SLOT_P')
export const BPSWN_SLOT_EXPONENT = constant('BPSWN_SLOT_EXPONENT')

/** Slots of the rho kernel (rhon.ts). */
export const RHON_SLOT_C = constant('RHON_SLOT_C')
export const RHON_SLOT_X = constant('RHON_SLOT_X')
export const RHON_SLOT_Y = constant('RHON_SLOT_Y')
export const RHON_SLOT_Q = constant('RHON_SLOT_Q')

/** Slots of the ECM kernel (ecm.ts): the curve, the point, stage 2's product and its tables. */
export const ECM_SLOT_A24 = constant('ECM_SLOT_A24')
export const ECM_SLOT_QX = constant('ECM_SLOT_QX')
export const ECM_SLOT_QZ = constant('ECM_SLOT_QZ')
export const ECM_SLOT_ACC = constant('ECM_SLOT_ACC')
export const ECM_SLOT_INV = constant('ECM_SLOT_INV')
export const ECM_BABY_X = constant('ECM_BABY_X')
export const ECM_BABY_Z = constant('ECM_BABY_Z')
export const ECM_BABY_PREFIX = constant('ECM_BABY_PREFIX')
export const ECM_CHUNK = constant('ECM_CHUNK')
export const ECM_GIANT_X = constant('ECM_GIANT_X')
export const ECM_GIANT_Z = constant('ECM_GIANT_Z')
export const ECM_GIANT_PREFIX = constant('ECM_GIANT_PREFIX')
/** The first slot past the ECM kernel's, which is also the most slots any multi-limb code uses. */
export const ECM_SLOTS = constant('ECM_SLOTS')

/** Opcodes of ECM stage 1's programs (ecm.ts runs them, prac.ts writes them). */
export const ECM_OP_END = constant('ECM_OP_END')
export const ECM_OP_DOUBLE = constant('ECM_OP_DOUBLE')
export const ECM_OP_INIT = constant('ECM_OP_INIT')
/** Added to a rule: swap A and B (d and e) before it. */
export const ECM_OP_SWAP = constant('ECM_OP_SWAP')

/** Makes n (odd, at most MAX_LIMBS limbs) the multi-limb modulus; returns its limb count. */
export function setModulus(n: bigint): number {
  const k = limbCount(n)
  if (k > MAX_LIMBS) throw new RangeError(`modulus of ${k} limbs exceeds ${MAX_LIMBS}`)
  ensureBytes(kernel.modulusPtr() + (2 * MAX_LIMBS + 2 + ECM_SLOTS * k) * 4)
  writeLimbs(kernel.modulusPtr(), n, k)
  kernel.setModulus(k)
  return k
}

export function limbCount(n: bigint): number {
  return Math.max(1, Math.ceil(n.toString(16).length / 8))
}

/** Grows the kernel's memory to at least `bytes`. */
export function ensureBytes(bytes: number): void {
  const have = kernel.memory.buffer.byteLength
  if (bytes > have) kernel.memory.grow(Math.ceil((bytes - have) / 65536))
}

/** Stores 0 <= x < 2^(32k) as k little-endian limbs at ptr. */
export function writeLimbs(ptr: number, x: bigint, k: number): void {
  const words = new Uint32Array(kernel.memory.buffer, ptr, k)
  // Hex digits give the limbs in one pass, where shifting a BigInt by 32 bits k times would be quadratic.
  const hex = x.toString(16)
  for (let i = 0; i < k; i++) {
    const end = hex.length - 8 * i
    words[i] = end > 0 ? Number.parseInt(hex.slice(Math.max(0, end - 8), end), 16) : 0
  }
}

export function readLimbs(ptr: number, k: number): bigint {
  const words = new Uint32Array(kernel.memory.buffer, ptr, k)
  let hex = ''
  for (let i = k - 1; i >= 0; i--) hex += (words[i] as number).toString(16).padStart(8, '0')
  return BigInt(`0x${hex}`)
}

/**
 * Bits per limb of the Baillie-PSW arithmetic (mont28.ts): seven hex digits. A literal, because it tells the
 * two arithmetics apart in types (LimbBits); the load checks it against the kernel's.
 */
export const BITS28 = 28
if (constant('BITS28') !== BITS28) throw new Error(`PrimeChecker kernel's BITS28 is not ${BITS28}`)

/** Bits per limb: 32 for montn, BITS28 for mont28. */
export type LimbBits = 32 | typeof BITS28

/** The most 28-bit limbs (mont28.ts). */
export const MAX_LIMBS28 = constant('MAX_LIMBS28')

/** Makes n (odd) the modulus of the 28-bit arithmetic, in its slot 0; returns its limb count. */
export function setModulus28(n: bigint): number {
  const k = Math.max(1, Math.ceil(bitLength(n) / BITS28))
  if (k > MAX_LIMBS28) throw new RangeError(`modulus of ${k} 28-bit limbs exceeds ${MAX_LIMBS28}`)
  writeLimbs28(0, n, k)
  kernel.setModulus28(k)
  return k
}

/** Stores 0 <= x < 2^(28k) in 28-bit slot `slot` as k little-endian limbs. */
export function writeLimbs28(slot: number, x: bigint, k: number): void {
  writeLimbs28At(kernel.slot28(slot), x, k)
}

/** Stores 0 <= x < 2^(28k) at ptr as k little-endian 28-bit limbs. */
export function writeLimbs28At(ptr: number, x: bigint, k: number): void {
  const words = new Uint32Array(kernel.memory.buffer, ptr, k)
  const hex = x.toString(16)
  for (let i = 0; i < k; i++) {
    const end = hex.length - 7 * i
    words[i] = end > 0 ? Number.parseInt(hex.slice(Math.max(0, end - 7), end), 16) : 0
  }
}

export function readLimbs28(slot: number, k: number): bigint {
  return readLimbs28At(kernel.slot28(slot), k)
}

export function readLimbs28At(ptr: number, k: number): bigint {
  const words = new Uint32Array(kernel.memory.buffer, ptr, k)
  let hex = ''
  for (let i = k - 1; i >= 0; i--) hex += (words[i] as number).toString(16).padStart(7, '0')
  return BigInt(`0x${hex}`)
}

export function writeSlot(slot: number, x: bigint): void {
  writeLimbs(kernel.slotPtr(slot), x, kernel.limbs())
}

export function readSlot(slot: number): bigint {
  return readLimbs(kernel.slotPtr(slot), kernel.limbs())
}

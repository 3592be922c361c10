// The PrimeChecker kernel: everything the TypeScript side calls, and the layout constants it reads at load
// (src/algorithms/prime-checker/kernel.ts), exported as globals so that no copy of them can drift.
export { isPrime64, isSquare64 } from './prime64'
export { gcd64, rho64 } from './rho64'
export { TRIAL_LIMBS, trialFactor64, trialFactorLimbs, trialLimbsPtr } from './trial64'
export { addN, copySlot, limbs, MAX_LIMBS, modulusPtr, mulN, setModulus, slotPtr } from './montn'
export { BITS28, MAX_LIMBS28, mul28, setModulus28, slot28, sqr28 } from './mont28'
export {
  extraStrongLucasN,
  SLOT_EXPONENT as BPSWN_SLOT_EXPONENT,
  SLOT_MINUS_ONE as BPSWN_SLOT_MINUS_ONE,
  SLOT_MINUS_TWO as BPSWN_SLOT_MINUS_TWO,
  SLOT_ONE as BPSWN_SLOT_ONE,
  SLOT_P as BPSWN_SLOT_P,
  SLOT_TWO as BPSWN_SLOT_TWO,
  sprp2N,
} from './bpswn'
export {
  rhoAccumulate,
  rhoAdvance,
  rhoReplayStep,
  rhoSave,
  SLOT_C as RHON_SLOT_C,
  SLOT_Q as RHON_SLOT_Q,
  SLOT_X as RHON_SLOT_X,
  SLOT_Y as RHON_SLOT_Y,
} from './rhon'
export {
  BABY_PREFIX as ECM_BABY_PREFIX,
  BABY_X as ECM_BABY_X,
  BABY_Z as ECM_BABY_Z,
  CHUNK as ECM_CHUNK,
  ECM_SLOTS,
  GIANT_PREFIX as ECM_GIANT_PREFIX,
  GIANT_X as ECM_GIANT_X,
  GIANT_Z as ECM_GIANT_Z,
  OP_DOUBLE as ECM_OP_DOUBLE,
  OP_END as ECM_OP_END,
  OP_INIT as ECM_OP_INIT,
  OP_SWAP as ECM_OP_SWAP,
  SLOT_A24 as ECM_SLOT_A24,
  SLOT_ACC as ECM_SLOT_ACC,
  SLOT_INV as ECM_SLOT_INV,
  SLOT_QX as ECM_SLOT_QX,
  SLOT_QZ as ECM_SLOT_QZ,
  ecmArithmetic,
  ecmBabySteps,
  ecmGiantSteps,
  ecmNormalize,
  ecmSlot,
  ecmStage1,
  ecmStage2,
  ecmStage2Setup,
} from './ecm'
export {
  qsAIndices,
  qsAPrimes,
  qsCofactor,
  qsCandidates,
  qsDividing,
  qsDividingResieved,
  qsEliminate,
  qsFactorBase,
  qsGammas,
  qsHits,
  qsKn,
  qsLegendre,
  qsLogs,
  qsNewA,
  qsNegative,
  qsNextB,
  qsPrimes,
  QS_MAX_A_PRIMES,
  QS_MAX_CANDIDATES,
  QS_MAX_KN_LIMBS,
  QS_MAX_PRIMES,
  QS_MAX_WIDTH,
  qsRelation,
  qsResieve,
  qsRoot1,
  qsRoot2,
  qsSetPolynomial,
  qsSieve,
  qsSqrts,
  qsTerms,
} from './qs'
export { pminus1_64 } from './pm1_64'
export { ecm64 } from './ecm64'

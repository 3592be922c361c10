// The PrimeChecker kernel: everything the TypeScript side calls.
export { isPrime64, isSquare64 } from './prime64'
export { gcd64, rho64 } from './rho64'
export { trialFactor64, trialFactorLimbs, trialLimbsPtr } from './trial64'
export { addN, copySlot, limbs, modulusPtr, mulN, setModulus, slotPtr } from './montn'
export { mul28, setModulus28, slot28, sqr28 } from './mont28'
export { extraStrongLucasN, sprp2N } from './bpswn'
export { rhoAccumulate, rhoAdvance, rhoReplayStep, rhoSave } from './rhon'
export {
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
  qsRelation,
  qsRoot1,
  qsRoot2,
  qsSetPolynomial,
  qsSieve,
  qsSqrts,
  qsTerms,
} from './qs'
export { pminus1_64 } from './pm1_64'
export { ecm64 } from './ecm64'

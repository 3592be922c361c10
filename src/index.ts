// What the package exports to those who write algorithms: the module contract's types, and
// `defineAlgorithm` to type a module (identity at run time; a module needs no import of ours).
export type { AlgorithmExample, AlgorithmModule, JsonSchema, RunContext } from './algorithms/algorithm.js'
export { defineAlgorithm } from './algorithms/algorithm.js'

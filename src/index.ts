// What the package exports to those who write algorithms: the module contract's types,
// `defineAlgorithm` to type a module (identity at run time; a module needs no import of ours), and
// InvalidParamsError to refuse params (any error of that name does as well).
export type { AlgorithmExample, AlgorithmModule, JsonSchema, RunContext } from './algorithms/algorithm.js'
export { defineAlgorithm } from './algorithms/algorithm.js'
export { InvalidParamsError } from './algorithms/invalid-params.js'

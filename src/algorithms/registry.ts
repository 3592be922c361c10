import type { Algorithm } from './algorithm.js'
import { primeChecker } from './prime-checker/index.js'

export const registry: ReadonlyMap<string, Algorithm> = new Map<string, Algorithm>([
  [primeChecker.name, primeChecker as Algorithm],
])

// What each of several HTTP processes takes of what is sized for the whole machine: the worker threads
// and the programs of each process algorithm are divided among the processes, at least one each, so
// that N processes hold what one would, not N times it (docs/operating.md#http-processes).
import { threadsFor, usableCpus } from '../execution/usable-cpus.js'

/** One process's part of `total` among `processes`: the whole divided, rounded down, at least one. */
export const shareOf = (total: number, processes: number): number =>
  Math.max(1, Math.floor(total / Math.max(1, processes)))

/**
 * One process's worker threads: its part of ALGOSERVE_WORKER_THREADS, or of its default (one per
 * usable CPU but one) when that is 0.
 */
export function threadsOfOne(workerThreads: number, processes: number): number {
  const total = workerThreads > 0 ? workerThreads : threadsFor(usableCpus().cpus)
  return shareOf(total, processes)
}

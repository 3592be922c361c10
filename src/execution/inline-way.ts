// The way of the calls an algorithm finds cheap (a built-in module's inline shortcuts): run on the
// event loop, in microseconds, with no hop to a thread; the others go the way behind it.
import type { Algorithm, InlineRuns } from '../algorithms/algorithm.js'
import { ignoreProgress } from './progress.js'
import { type RunOptions, type RunWay, tellStart } from './run-way.js'
import { type TimedRun, timedRunInline } from './timed-run.js'

/** The signal of inline runs, which nothing aborts: they take microseconds. */
const NEVER_ABORTED = new AbortController().signal

export class InlineWay implements RunWay {
  readonly #algorithm: Algorithm & { inline: InlineRuns }
  readonly #next: RunWay

  constructor(algorithm: Algorithm & { inline: InlineRuns }, next: RunWay) {
    this.#algorithm = algorithm
    this.#next = next
  }

  run(params: unknown, options: RunOptions): TimedRun | Promise<TimedRun> {
    const { budgetMs, timeoutMs } = options
    let run: TimedRun | undefined
    try {
      run = timedRunInline(this.#algorithm, params, {
        budgetMs,
        // Nothing aborts a run of microseconds.
        signal: NEVER_ABORTED,
        deadline: timeoutMs === undefined ? Number.MAX_SAFE_INTEGER : Date.now() + timeoutMs,
        progress: ignoreProgress,
      })
    } catch (error) {
      tellStart(options)
      throw error
    }
    if (run === undefined) return this.#next.run(params, options)
    // It began and ended in this turn: told as begun all the same, before its caller hears the end.
    tellStart(options)
    return run
  }

  ready(): boolean {
    return this.#next.ready()
  }

  /** What it runs on closes with its own owner. */
  async close(): Promise<void> {}
}

// What an algorithm provides. A second algorithm is one new folder implementing this, added to
// `registry.ts`; the pool and the job runner need no change. `POST /invoke` is bound to PrimeChecker
// by the contract, and the response schemas name PrimeChecker's result (`http/schemas.ts`), so an
// algorithm with its own result shape adds its schema there too.

export interface ParamLimits {
  /** The most decimal digits an integer parameter may have. */
  maxDigits: number
}

export interface RunOptions {
  /** How long the algorithm may spend on work it can cut short (PrimeChecker: factorisation), in ms. */
  budgetMs: number
  /** Aborts the run; checked between steps of the work. */
  signal?: AbortSignal
}

export interface Algorithm<Params = unknown, Result = unknown> {
  readonly name: string
  /** major.minor.patch, reported in every result's metadata. */
  readonly version: string
  /**
   * Checks raw params and converts them to what `run` takes (structured-cloneable, for worker threads).
   * Throws a ValidationError naming the field as `${fieldPrefix}${name}`.
   */
  parseParams(raw: Record<string, unknown>, limits: ParamLimits, fieldPrefix: string): Params
  /** True when the run is cheap enough (microseconds) to do on the thread that serves HTTP. */
  isCheap(params: Params): boolean
  /**
   * For params that isCheap cannot judge from their size alone: the result when it is found in
   * microseconds (a bounded amount of work, whatever the params), otherwise undefined and the run
   * goes to a worker thread.
   */
  runIfCheap?(params: Params, options: RunOptions): Result | undefined
  run(params: Params, options: RunOptions): Result
}

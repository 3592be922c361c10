/**
 * Told how far a step of the factorisation has come: a fraction from 0 to 1 and a message naming the step.
 */
export type ProgressReporter = (fraction: number, message: string) => void

/**
 * The time a factorisation may take, its abort signal, checked between steps of the work, and where the
 * steps report their progress. Steps call `budget.progress?.(...)`: without a reporter the call, message
 * included, is never evaluated.
 */
export class Budget {
  /** Measured ms per kernel multiplication, divided by the squared limb count; starts pessimistic. */
  private msPerLimb2 = 2e-6

  constructor(
    readonly deadline: number,
    private readonly signal?: AbortSignal,
    readonly progress?: ProgressReporter,
  ) {}

  /**
   * A budget with the same signal and reporter that ends `ms` from now, or at this one's deadline if that
   * is sooner.
   */
  within(ms: number): Budget {
    return new Budget(Math.min(this.deadline, performance.now() + ms), this.signal, this.progress)
  }

  /** True once the deadline has passed; throws the signal's reason once it is aborted. */
  timeIsUp(): boolean {
    if (this.signal?.aborted) throw this.signal.reason
    return performance.now() >= this.deadline
  }

  /** Whether `muls` kernel multiplications modulo a k-limb number should finish before the deadline. */
  affords(muls: number, k: number): boolean {
    return !this.timeIsUp() && performance.now() + muls * k * k * this.msPerLimb2 <= this.deadline
  }

  /** How many multiplications fit in `ms` at the measured speed (at least 1). */
  mulsIn(ms: number, k: number): number {
    return Math.max(1, Math.floor(ms / (k * k * this.msPerLimb2)))
  }

  /** Learns the speed from a piece of work that took `ms` for `muls` multiplications. */
  observe(muls: number, k: number, ms: number): void {
    if (muls < 50 || ms <= 0) return
    const sample = ms / (muls * k * k)
    this.msPerLimb2 = Math.max(sample, 0.5 * this.msPerLimb2 + 0.5 * sample)
  }
}

/** A count with its thousands grouped, as messages show it (1,530): no Intl, whose formatting costs more. */
export function grouped(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+$)/g, ',')
}

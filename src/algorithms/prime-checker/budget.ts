/** The time a factorisation may take, and its abort signal, checked between steps of the work. */
export class Budget {
  /** Measured ms per kernel multiplication, divided by the squared limb count; starts pessimistic. */
  private msPerLimb2 = 2e-6

  constructor(
    readonly deadline: number,
    private readonly signal?: AbortSignal,
  ) {}

  /** A budget with the same signal that ends `ms` from now, or at this one's deadline if that is sooner. */
  within(ms: number): Budget {
    return new Budget(Math.min(this.deadline, performance.now() + ms), this.signal)
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

/**
 * What the upstream exchange lets one IP spend, as seen from this node.
 *
 * Binance counts request weight per IP in fixed one-minute windows (2400 on USD-M futures) and reports
 * the window's total in `X-MBX-USED-WEIGHT-1M` on every response; going over answers 429, and
 * ignoring 429s earns an IP ban (418). The `/futures/data` endpoints weigh 0 but are capped at 1000
 * requests per 5 minutes per IP. We stop short of both limits by a margin, because other nodes behind
 * the same IP spend from the same budget between two of our readings.
 */
export class WeightBudget {
  private windowId = -1
  private used = 0
  private reserved = 0

  constructor(
    /** The exchange's limit per window. */
    readonly limit: number,
    /** The share of the limit we never touch (0.1 stops at 2160 of 2400). */
    readonly margin: number,
    private readonly windowMs = 60_000,
  ) {}

  /** The weight we will not go beyond. */
  get ceiling(): number {
    return Math.floor(this.limit * (1 - this.margin))
  }

  /** The window's weight as last reported plus what our calls in flight will add. */
  usedAt(now: number): number {
    return (this.windowOf(now) === this.windowId ? this.used : 0) + this.reserved
  }

  /**
   * Reserves `weight` for a call about to start; false when it would cross the ceiling, lowered by
   * `keep` (a share of the limit) for calls that can do without.
   */
  tryReserve(weight: number, now: number, keep = 0): boolean {
    if (weight > 0 && this.usedAt(now) + weight > this.ceiling - Math.floor(this.limit * keep)) return false
    this.reserved += weight
    return true
  }

  /**
   * Releases a reservation once its call is over. `reported` is the exchange's own count when it
   * answered; without one, an answered call adds its weight and an unanswered one (refused, reset)
   * adds nothing.
   */
  settle(weight: number, outcome: { answered: boolean; reported?: number | undefined }, now: number): void {
    this.reserved = Math.max(0, this.reserved - weight)
    const windowId = this.windowOf(now)
    if (windowId !== this.windowId) {
      this.windowId = windowId
      this.used = 0
    }
    // Responses can arrive out of order within a window; the count only grows inside one.
    if (outcome.reported !== undefined) this.used = Math.max(this.used, outcome.reported)
    else if (outcome.answered) this.used += weight
  }

  private windowOf(now: number): number {
    return Math.floor(now / this.windowMs)
  }
}

/** A count of requests over a sliding window, for limits that count requests rather than weight. */
export class RequestWindow {
  private readonly times: number[] = []

  constructor(
    readonly limit: number,
    readonly margin: number,
    private readonly windowMs: number,
  ) {}

  get ceiling(): number {
    return Math.floor(this.limit * (1 - this.margin))
  }

  /** Counts one request at `now`; false (and nothing counted) when the window is full, less `keep` (a share of the limit). */
  tryTake(now: number, keep = 0): boolean {
    while (this.times.length > 0 && this.times[0]! <= now - this.windowMs) this.times.shift()
    if (this.times.length >= this.ceiling - Math.floor(this.limit * keep)) return false
    this.times.push(now)
    return true
  }

  countAt(now: number): number {
    return this.times.filter((time) => time > now - this.windowMs).length
  }
}

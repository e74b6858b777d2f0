/**
 * Highest (or lowest) of the last `period` values in O(1) amortised per value: a monotonic deque of
 * candidates, each dropped once a newer value dominates it or it leaves the window.
 */
export class RollingExtreme {
  private readonly index: Float64Array
  private readonly values: Float64Array
  private head = 0
  private size = 0
  private pushed = 0

  constructor(
    readonly period: number,
    readonly kind: 'max' | 'min',
  ) {
    if (!(Number.isInteger(period) && period >= 1)) throw new RangeError(`window must be an integer ≥ 1 (got ${period})`)
    this.index = new Float64Array(period)
    this.values = new Float64Array(period)
  }

  push(x: number): void {
    const cap = this.period
    const n = this.pushed++
    if (this.size > 0 && this.index[this.head]! <= n - cap) {
      this.head = (this.head + 1) % cap
      this.size--
    }
    const max = this.kind === 'max'
    while (this.size > 0) {
      const tail = (this.head + this.size - 1) % cap
      const v = this.values[tail]!
      if (max ? v > x : v < x) break
      this.size--
    }
    const slot = (this.head + this.size) % cap
    this.index[slot] = n
    this.values[slot] = x
    this.size++
  }

  /** The extreme of the last `period` values; NaN until `period` values were pushed. */
  get value(): number {
    return this.pushed < this.period ? Number.NaN : this.values[this.head]!
  }
}

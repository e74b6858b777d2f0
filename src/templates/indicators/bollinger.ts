/**
 * Bollinger bands: middle = simple average of the last `period` closes, upper/lower = middle ± width ×
 * population standard deviation (ddof 0, as Bollinger defined them). Computed in two passes over the
 * window each bar: O(period), but free of the cancellation that running sums of squares suffer at
 * BTC prices (60 000² ≈ 3.6e9 against variances of 1e2).
 */
export class Bollinger {
  private readonly ring: Float64Array
  private pos = 0
  private count = 0
  middle = Number.NaN
  upper = Number.NaN
  lower = Number.NaN

  constructor(
    readonly period: number,
    readonly width: number,
  ) {
    if (!(Number.isInteger(period) && period >= 2)) throw new RangeError(`Bollinger period must be an integer ≥ 2 (got ${period})`)
    this.ring = new Float64Array(period)
  }

  /** Adds a close; returns true once the bands are defined. */
  push(close: number): boolean {
    this.ring[this.pos] = close
    this.pos = (this.pos + 1) % this.period
    this.count++
    if (this.count < this.period) return false
    let sum = 0
    for (let k = 0; k < this.period; k++) sum += this.ring[k]!
    const mean = sum / this.period
    let squares = 0
    for (let k = 0; k < this.period; k++) squares += (this.ring[k]! - mean) ** 2
    const std = Math.sqrt(squares / this.period)
    this.middle = mean
    this.upper = mean + this.width * std
    this.lower = mean - this.width * std
    return true
  }
}

/**
 * Exponential moving average with α = 2 / (period + 1), seeded with the simple average of the first
 * `period` values (TA-Lib's and StockCharts' seeding); NaN until then.
 */
export class Ema {
  readonly alpha: number
  private count = 0
  private sum = 0
  value = Number.NaN

  constructor(readonly period: number) {
    if (!(Number.isInteger(period) && period >= 1)) throw new RangeError(`EMA period must be an integer ≥ 1 (got ${period})`)
    this.alpha = 2 / (period + 1)
  }

  push(x: number): number {
    if (this.count < this.period) {
      this.sum += x
      this.count++
      if (this.count === this.period) this.value = this.sum / this.period
      return this.value
    }
    this.value += this.alpha * (x - this.value)
    return this.value
  }
}

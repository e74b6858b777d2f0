/**
 * Wilder's RSI: the first average gain and loss are simple averages of the first `period` changes,
 * later ones are smoothed as (previous × (period − 1) + current) / period. RSI = 100 − 100 / (1 + RS),
 * 100 when there was no loss, 50 when there was neither gain nor loss. NaN for the first `period` closes.
 */
export class WilderRsi {
  private previous = Number.NaN
  private changes = 0
  private avgGain = 0
  private avgLoss = 0
  value = Number.NaN

  constructor(readonly period: number) {
    if (!(Number.isInteger(period) && period >= 1)) throw new RangeError(`RSI period must be an integer ≥ 1 (got ${period})`)
  }

  push(close: number): number {
    const previous = this.previous
    this.previous = close
    if (previous !== previous) return Number.NaN
    const change = close - previous
    const gain = change > 0 ? change : 0
    const loss = change < 0 ? -change : 0
    const n = this.period
    if (this.changes < n) {
      this.avgGain += gain
      this.avgLoss += loss
      this.changes++
      if (this.changes < n) return Number.NaN
      this.avgGain /= n
      this.avgLoss /= n
    } else {
      this.avgGain = (this.avgGain * (n - 1) + gain) / n
      this.avgLoss = (this.avgLoss * (n - 1) + loss) / n
    }
    this.value = this.avgLoss === 0 ? (this.avgGain === 0 ? 50 : 100) : 100 - 100 / (1 + this.avgGain / this.avgLoss)
    return this.value
  }
}

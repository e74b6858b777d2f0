const MAX_DECIMALS = 8

/**
 * A fast and a slow simple moving average of one price stream, kept so that the sign of fast − slow is
 * exact. Prices are decimals (a tick apart); their running sums are kept in integer units of
 * 10^−decimals, where `decimals` grows to the most any price needed. Integers below 2^53 add and
 * multiply exactly, so fast − slow is exactly 0 when the averages are equal (a flat market), where
 * float running sums would drift to ±1e−12 and invent crosses. A stream that would overflow that
 * range falls back to float sums, re-summed every `slow` prices so drift stays bounded.
 */
export class SmaPair {
  private readonly ring: Float64Array
  private pos = 0
  /** Ring slot of the price that leaves the fast window at the next push, once `fast` prices are in. */
  private fastOut = 0
  private count = 0
  private fastSum = 0
  private slowSum = 0
  private factor = 1
  private decimals = 0
  private exact = true
  private maxTicks = 0
  /** Largest tick count that keeps slowSum × fast and fastSum × slow below 2^53. */
  private readonly limit: number

  constructor(
    readonly fast: number,
    readonly slow: number,
  ) {
    if (!(Number.isInteger(fast) && Number.isInteger(slow) && fast >= 1 && fast < slow)) {
      throw new RangeError(`SmaPair needs integer periods 1 ≤ fast < slow (got ${fast}, ${slow})`)
    }
    this.ring = new Float64Array(slow)
    this.limit = Math.floor(Number.MAX_SAFE_INTEGER / (fast * slow))
  }

  push(price: number): void {
    const x = this.exact ? this.toTicks(price) : price
    const ring = this.ring
    const slow = this.slow
    const pos = this.pos
    if (this.count >= slow) this.slowSum -= ring[pos]!
    if (this.count >= this.fast) {
      const out = this.fastOut
      this.fastSum -= ring[out]!
      this.fastOut = out + 1 === slow ? 0 : out + 1
    }
    ring[pos] = x
    this.slowSum += x
    this.fastSum += x
    this.pos = pos + 1 === slow ? 0 : pos + 1
    this.count++
    if (!this.exact && this.pos === 0) this.resum()
  }

  /**
   * push(prices[k]) for from ≤ k < to, writing what diffSign() would answer after each (NaN before
   * `slow` prices) to signs[k − from]. The same numbers as push one at a time: the usual case (exact,
   * window full, a price on the current tick grid within the range) runs here with the state in locals;
   * anything else goes through push. Per-bar push() kept the sums in object fields, loaded and stored on
   * every bar: this was most of sma_cross's cost in bench/backtest.ts.
   */
  pushAll(prices: Float64Array, from: number, to: number, signs: Float64Array): void {
    const slow = this.slow
    let k = from
    while (k < to) {
      if (this.exact && this.count >= slow) k = this.pushExact(prices, k, to, signs, from)
      if (k === to) break
      this.push(prices[k]!)
      signs[k - from] = this.count >= slow ? this.diffSign() : Number.NaN
      k++
    }
  }

  /** pushAll's usual case from k on; returns the index of the first price it leaves to push(). */
  private pushExact(prices: Float64Array, k: number, to: number, signs: Float64Array, from: number): number {
    const ring = this.ring
    const slow = this.slow
    const fast = this.fast
    const limit = this.limit
    const factor = this.factor
    const begin = k
    let pos = this.pos
    let out = this.fastOut
    let fastSum = this.fastSum
    let slowSum = this.slowSum
    let maxTicks = this.maxTicks
    for (; k < to; k++) {
      // toTicks' test, inline: a price off the grid or beyond the limit leaves this loop for push().
      const t = prices[k]! * factor
      const x = Math.round(t)
      if (!(Math.abs(t - x) <= 1e-9 + 1e-15 * Math.abs(t))) break
      const size = Math.abs(x)
      if (size > maxTicks) {
        if (size > limit) break
        maxTicks = size
      }
      slowSum -= ring[pos]!
      fastSum -= ring[out]!
      out = out + 1 === slow ? 0 : out + 1
      ring[pos] = x
      slowSum += x
      fastSum += x
      pos = pos + 1 === slow ? 0 : pos + 1
      const d = fastSum * slow - slowSum * fast
      signs[k - from] = d > 0 ? 1 : d < 0 ? -1 : 0
    }
    this.pos = pos
    this.fastOut = out
    this.fastSum = fastSum
    this.slowSum = slowSum
    this.maxTicks = maxTicks
    this.count += k - begin
    return k
  }

  /** True once `slow` prices were pushed. */
  get ready(): boolean {
    return this.count >= this.slow
  }

  /** Sign of fastMean − slowMean: 1, 0 or −1. */
  diffSign(): number {
    const d = this.fastSum * this.slow - this.slowSum * this.fast
    return d > 0 ? 1 : d < 0 ? -1 : 0
  }

  get fastMean(): number {
    return this.fastSum / this.fast / (this.exact ? this.factor : 1)
  }

  get slowMean(): number {
    return this.slowSum / this.slow / (this.exact ? this.factor : 1)
  }

  private toTicks(price: number): number {
    for (;;) {
      const t = price * this.factor
      const r = Math.round(t)
      // price is the double nearest a decimal; t is within ~2.3e-16·|t| of that decimal's tick count.
      if (Math.abs(t - r) <= 1e-9 + 1e-15 * Math.abs(t)) {
        const size = Math.abs(r)
        if (size > this.maxTicks) this.maxTicks = size
        if (this.maxTicks <= this.limit) return r
      } else if (this.decimals < MAX_DECIMALS) {
        this.rescale()
        if (this.maxTicks <= this.limit) continue
      }
      this.toFloat()
      return price
    }
  }

  private rescale(): void {
    this.decimals++
    this.factor *= 10
    this.maxTicks *= 10
    this.fastSum *= 10
    this.slowSum *= 10
    for (let k = 0; k < this.ring.length; k++) this.ring[k]! *= 10
  }

  private toFloat(): void {
    this.exact = false
    for (let k = 0; k < this.ring.length; k++) this.ring[k]! /= this.factor
    this.resum()
  }

  private resum(): void {
    const filled = Math.min(this.count, this.slow)
    let slowSum = 0
    let fastSum = 0
    for (let back = 1; back <= filled; back++) {
      const x = this.ring[(this.pos - back + this.slow) % this.slow]!
      slowSum += x
      if (back <= this.fast) fastSum += x
    }
    this.slowSum = slowSum
    this.fastSum = fastSum
  }
}

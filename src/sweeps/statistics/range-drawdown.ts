/**
 * The largest fall over any range of a log-equity series, in O(log T) per range: a segment tree whose
 * nodes keep the max, the min and the largest drop (an earlier high minus a later low) of their span.
 * Rolling walk-forward windows overlap, so scanning each window would cost T²/4 per configuration when
 * the in-sample window is half the history and the out-of-sample step one day.
 */
export class RangeDrawdown {
  private size = 1
  private high = new Float64Array(2)
  private low = new Float64Array(2)
  private drop = new Float64Array(2)

  /** Rebuilds over `levels` (log equity, finite), reusing the buffers when they are large enough. */
  load(levels: Float64Array, count: number): void {
    let size = 1
    while (size < count) size *= 2
    if (this.high.length < 2 * size) {
      this.high = new Float64Array(2 * size)
      this.low = new Float64Array(2 * size)
      this.drop = new Float64Array(2 * size)
    }
    this.size = size
    for (let k = 0; k < size; k++) {
      const inside = k < count
      this.high[size + k] = inside ? levels[k]! : -Infinity
      this.low[size + k] = inside ? levels[k]! : Infinity
      this.drop[size + k] = 0
    }
    for (let node = size - 1; node >= 1; node--) {
      const l = 2 * node
      const r = l + 1
      this.high[node] = Math.max(this.high[l]!, this.high[r]!)
      this.low[node] = Math.min(this.low[l]!, this.low[r]!)
      this.drop[node] = Math.max(this.drop[l]!, this.drop[r]!, this.high[l]! - this.low[r]!)
    }
  }

  /** The largest fall, as a positive log ratio, over the points first..last (inclusive, in order). */
  largestFall(first: number, last: number): number {
    // Left pieces fold in from the left, right pieces from the right, so order is kept.
    let leftHigh = -Infinity
    let leftLow = Infinity
    let leftDrop = 0
    let rightHigh = -Infinity
    let rightLow = Infinity
    let rightDrop = 0
    let l = first + this.size
    let r = last + this.size + 1
    while (l < r) {
      if (l & 1) {
        leftDrop = Math.max(leftDrop, this.drop[l]!, leftHigh - this.low[l]!)
        leftHigh = Math.max(leftHigh, this.high[l]!)
        leftLow = Math.min(leftLow, this.low[l]!)
        l++
      }
      if (r & 1) {
        r--
        rightDrop = Math.max(rightDrop, this.drop[r]!, this.high[r]! - rightLow)
        rightHigh = Math.max(rightHigh, this.high[r]!)
        rightLow = Math.min(rightLow, this.low[r]!)
      }
      l >>= 1
      r >>= 1
    }
    return Math.max(leftDrop, rightDrop, leftHigh - rightLow)
  }
}

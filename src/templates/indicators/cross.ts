/**
 * The cross rule of DESIGN/issue 4: a cross up is the first observation with diff > 0 whose previous
 * nonzero diff was < 0 (a cross down mirrored). Zeros neither cross nor reset; the first nonzero diff
 * has no predecessor, so it is not a cross.
 */
export class CrossDetector {
  private lastSign = 0

  /** 1 on a cross up, −1 on a cross down, else 0. */
  update(diffSign: number): number {
    if (diffSign > 0) {
      const crossed = this.lastSign < 0
      this.lastSign = 1
      return crossed ? 1 : 0
    }
    if (diffSign < 0) {
      const crossed = this.lastSign > 0
      this.lastSign = -1
      return crossed ? -1 : 0
    }
    return 0
  }

  /**
   * update() over values[0..count), in place: 1 where it answers 1 becomes `up`, −1 becomes `down`, and
   * 0 or NaN (no value yet) becomes NaN.
   */
  updateAll(values: Float64Array, count: number, up: number, down: number): void {
    let lastSign = this.lastSign
    for (let k = 0; k < count; k++) {
      const v = values[k]!
      let target = Number.NaN
      if (v > 0) {
        if (lastSign < 0) target = up
        lastSign = 1
      } else if (v < 0) {
        if (lastSign > 0) target = down
        lastSign = -1
      }
      values[k] = target
    }
    this.lastSign = lastSign
  }
}

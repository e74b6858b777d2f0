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
}

/**
 * r_t = E_t / E_{t−1} − 1 over a daily equity curve (issue 23 "Conventions"), T + 1 points giving T
 * returns. A ruined account stays ruined: after equity reaches 0 (or a point is not a finite positive
 * number) the return is 0, and a fall below 0 counts as −1 (all was lost), so no statistic meets a
 * division by zero or a return below −100 %.
 */
export function dailyReturns(equity: Float64Array): Float64Array {
  const returns = new Float64Array(Math.max(0, equity.length - 1))
  for (let t = 1; t < equity.length; t++) {
    const before = equity[t - 1]!
    const after = equity[t]!
    returns[t - 1] = before > 0 && before < Infinity && Number.isFinite(after) ? Math.max(after / before - 1, -1) : 0
  }
  return returns
}

import type { ReturnsMatrix } from '../../api/sweep-types.js'
import { seconds } from '../../charts/chart-time.js'

/**
 * A run's equity rebuilt from its column of daily returns: `capital` on the day before the first
 * return, then compounded (E_t = E_{t−1}·(1 + r_t)), one point per day as the backtest's own curve.
 */
export function equityFromReturns(matrix: ReturnsMatrix, runId: string, capital: number): { time: number; value: number }[] | undefined {
  const column = matrix.run_ids.indexOf(runId)
  if (column < 0 || matrix.dates.length === 0) return undefined
  const points = [{ time: seconds(matrix.dates[0]!) - 86_400, value: capital }]
  let equity = capital
  for (let t = 0; t < matrix.dates.length; t++) {
    equity *= 1 + matrix.returns[t]![column]!
    points.push({ time: seconds(matrix.dates[t]!), value: equity })
  }
  return points
}

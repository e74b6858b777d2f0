import type { ReturnsMatrix } from '../../api/sweep-types.js'
import { seconds } from '../../charts/chart-time.js'

/**
 * GET …/returns is read for the best run's equity only while the matrix stays this small (cells, T × N):
 * ~20 characters a cell makes 8 MB of JSON at the limit, and a sweep of 1,000 configurations over
 * 5 years (1.8 M cells) would be 36 MB for one curve.
 */
export const MAX_RETURNS_CELLS = 400_000

/** The matrix's T × N, from the sweep's span and configurations (one return per day after the first). */
export function returnsCells(configurations: number, start: string, end: string): number {
  return configurations * Math.max(0, Math.round((Date.parse(end) - Date.parse(start)) / 86_400_000))
}

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

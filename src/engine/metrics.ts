import { DAY_MS } from './daily-curve.js'
import { EXIT_REASONS, type ExitReason, type Metrics, type Trade } from './types.js'

/** DESIGN §5: crypto trades every day, so daily returns annualise with 365 (empyrical's default is 252). */
export const PERIODS_PER_YEAR = 365

/** Simple returns between consecutive points: v[k] / v[k − 1] − 1. */
export function simpleReturns(values: readonly number[]): number[] {
  const returns: number[] = []
  for (let k = 1; k < values.length; k++) returns.push(values[k]! / values[k - 1]! - 1)
  return returns
}

function mean(xs: readonly number[]): number {
  let sum = 0
  for (const x of xs) sum += x
  return sum / xs.length
}

/** mean / std (ddof 1) × √periodsPerYear, risk-free 0 (empyrical sharpe_ratio); null for < 2 returns or zero deviation. */
export function sharpeRatio(returns: readonly number[], periodsPerYear = PERIODS_PER_YEAR): number | null {
  if (returns.length < 2) return null
  const m = mean(returns)
  let squares = 0
  for (const r of returns) squares += (r - m) ** 2
  const std = Math.sqrt(squares / (returns.length - 1))
  if (std === 0) return null
  return (m / std) * Math.sqrt(periodsPerYear)
}

/**
 * Downside deviation below 0 over all periods, annualised: √(mean(min(r, 0)²)) × √periodsPerYear
 * (empyrical downside_risk: periods above the target count as zeros, the mean is over every period).
 */
export function downsideRisk(returns: readonly number[], periodsPerYear = PERIODS_PER_YEAR): number | null {
  if (returns.length === 0) return null
  let squares = 0
  for (const r of returns) if (r < 0) squares += r * r
  return Math.sqrt(squares / returns.length) * Math.sqrt(periodsPerYear)
}

/** mean × periodsPerYear / downside risk (empyrical sortino_ratio, required return 0); null for < 2 returns or no downside. */
export function sortinoRatio(returns: readonly number[], periodsPerYear = PERIODS_PER_YEAR): number | null {
  if (returns.length < 2) return null
  const risk = downsideRisk(returns, periodsPerYear)
  if (risk === null || risk === 0) return null
  return (mean(returns) * periodsPerYear) / risk
}

/** Each value's fall from the running peak up to it, a fraction ≤ 0 (the dashboard draws this curve). */
export function drawdownCurve(values: readonly number[]): number[] {
  let peak = -Infinity
  return values.map((v) => {
    if (v > peak) peak = v
    return v / peak - 1
  })
}

/** Largest fall from a running peak as a fraction ≤ 0 (empyrical max_drawdown with the start value included). */
export function maxDrawdown(values: readonly number[]): number {
  let worst = 0
  for (const drawdown of drawdownCurve(values)) if (drawdown < worst) worst = drawdown
  return worst
}

/**
 * Compound annual growth from the first to the last value over `days` calendar days (365 a year):
 * (last / first)^(365 / days) − 1. With one point per day this is empyrical annual_return over daily
 * returns. null when no time passed or the growth does not fit a float.
 */
export function cagr(first: number, last: number, days: number, daysPerYear = PERIODS_PER_YEAR): number | null {
  if (!(days > 0) || !(first > 0)) return null
  if (last <= 0) return -1
  const growth = (last / first) ** (daysPerYear / days) - 1
  return Number.isFinite(growth) ? growth : null
}

/** cagr / |max drawdown| (empyrical calmar_ratio); null when the curve never fell. */
export function calmarRatio(growth: number | null, drawdown: number): number | null {
  if (growth === null || drawdown === 0) return null
  return growth / Math.abs(drawdown)
}

/** Every metric of a result, from its daily curve and closed trades (open positions are not trades). */
export function computeMetrics(curveTimes: readonly number[], curveValues: readonly number[], trades: readonly Trade[]): Metrics {
  const returns = simpleReturns(curveValues)
  const drawdown = maxDrawdown(curveValues)
  const days = curveTimes.length > 1 ? (curveTimes[curveTimes.length - 1]! - curveTimes[0]!) / DAY_MS : 0
  const growth = cagr(curveValues[0]!, curveValues[curveValues.length - 1]!, days)
  let wins = 0
  let grossProfit = 0
  let grossLoss = 0
  let pnlSum = 0
  let durationMs = 0
  for (const trade of trades) {
    pnlSum += trade.pnl
    durationMs += trade.exitTime - trade.entryTime
    if (trade.pnl > 0) {
      wins++
      grossProfit += trade.pnl
    } else if (trade.pnl < 0) {
      grossLoss -= trade.pnl
    }
  }
  const n = trades.length
  return {
    sharpe: sharpeRatio(returns),
    sortino: sortinoRatio(returns),
    calmar: calmarRatio(growth, drawdown),
    maxDrawdown: drawdown,
    winRate: n === 0 ? null : wins / n,
    profitFactor: grossLoss === 0 ? null : grossProfit / grossLoss,
    cagr: growth,
    expectedValue: n === 0 ? null : pnlSum / n,
    totalTrades: n,
    avgTradeDurationSeconds: n === 0 ? null : Math.round(durationMs / n / 1000),
  }
}

/** Closed trades per exit reason, every reason present (0 for none). */
export function exitReasonCounts(trades: readonly Trade[]): Record<ExitReason, number> {
  const counts = Object.fromEntries(EXIT_REASONS.map((reason) => [reason, 0])) as Record<ExitReason, number>
  for (const trade of trades) counts[trade.exitReason]++
  return counts
}

import type { BacktestResult, Metrics } from '../engine/index.js'

/**
 * A float as a decimal string: at most `digits` decimals, trailing zeros dropped, never exponent
 * notation (1e-7 → "0.0000001"). The engine computes in float64; the edge decides the precision.
 */
export function decimal(value: number, digits = 8): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`)
  const fixed = value.toFixed(digits)
  const trimmed = fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed
  return trimmed === '-0' ? '0' : trimmed
}

const maybe = (value: number | null, digits = 8): string | null => (value === null ? null : decimal(value, digits))
const iso = (ms: number): string => new Date(ms).toISOString()

export function formatMetrics(metrics: Metrics): Record<string, unknown> {
  return {
    sharpe: maybe(metrics.sharpe),
    sortino: maybe(metrics.sortino),
    calmar: maybe(metrics.calmar),
    max_drawdown: decimal(metrics.maxDrawdown),
    win_rate: maybe(metrics.winRate),
    profit_factor: maybe(metrics.profitFactor),
    cagr: maybe(metrics.cagr),
    expected_value: maybe(metrics.expectedValue),
    total_trades: metrics.totalTrades,
    avg_trade_duration_seconds: metrics.avgTradeDurationSeconds === null ? null : Math.round(metrics.avgTradeDurationSeconds),
  }
}

/** The job's `result` object (spec "Result fields", plus open positions, gaps and totals). */
export function formatResult(result: BacktestResult, intervalMs: number): Record<string, unknown> {
  return {
    metrics: formatMetrics(result.metrics),
    equity_curve: result.equityCurve.map(([time, equity]) => [iso(time), decimal(equity)]),
    trades: result.trades.map((t) => ({
      id: t.id,
      side: t.side,
      symbol: t.symbol,
      entry_time: iso(t.entryTime),
      entry_price: decimal(t.entryPrice),
      exit_time: iso(t.exitTime),
      exit_price: decimal(t.exitPrice),
      qty: decimal(t.qty),
      pnl: decimal(t.pnl),
      fee: decimal(t.fee),
      funding: decimal(t.funding),
      exit_reason: t.exitReason,
    })),
    open_positions: result.openPositions.map((p) => ({
      symbol: p.symbol,
      side: p.side,
      qty: decimal(p.qty),
      entry_time: iso(p.entryTime),
      entry_price: decimal(p.entryPrice),
      mark_price: decimal(p.markPrice),
      unrealized_pnl: decimal(p.unrealizedPnl),
    })),
    gaps: result.gaps.map((g) => ({ symbol: g.symbol, from: iso(g.from), to: iso(g.to), missing_bars: Math.round((g.to - g.from) / intervalMs) + 1 })),
    final_equity: decimal(result.finalEquity),
    fees_paid: decimal(result.feesPaid),
    funding_paid: decimal(result.fundingPaid),
  }
}

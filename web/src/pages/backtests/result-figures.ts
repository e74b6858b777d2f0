import type { BacktestTrade, Job, KlineRow } from '../../api/types.js'
import { seconds } from '../../charts/chart-time.js'

/** The equity curve as chart points: one per simulated day, as the API gives it. */
export function equityPoints(job: Job): { time: number; value: number }[] {
  // Pairs of [ISO time, decimal]; the generated type loses the tuple, hence the `!`.
  return (job.result?.equity_curve ?? []).map(([at, equity]) => ({ time: seconds(at!), value: Number(equity) }))
}

/**
 * What strategy testers show beside the spec's metrics, all from the job itself: net profit (final
 * equity less capital), total return on capital, and fees as a share of the gross profit (the profit
 * before fees, net profit + fees paid; undefined when there was none, where a share means nothing).
 */
export function resultFigures(job: Job): { netProfit: number; totalReturn: number; feeShare: number | undefined } {
  const capital = Number(job.config.capital)
  const netProfit = Number(job.result!.final_equity) - capital
  const fees = Number(job.result!.fees_paid)
  const gross = netProfit + fees
  return { netProfit, totalReturn: netProfit / capital, feeShare: gross > 0 ? fees / gross : undefined }
}

/** A day, for the buy-and-hold line's klines (a run of more than 1500 days reads weeks: one klines call either way). */
export function holdInterval(job: Job): '1d' | '1w' {
  const days = (new Date(job.config.end).getTime() - new Date(job.config.start).getTime()) / 86_400_000
  return days <= 1500 ? '1d' : '1w'
}

/**
 * Buying at the first close of the run and holding, unlevered and without fees: the capital split
 * evenly over the job's symbols, each valued at its close. `bars` holds each symbol's klines (opened at
 * or after the start), in the job's order; a bar opened at or after the end is not part of the run. A
 * point sits at its bar's close, the run's end at most, as the equity curve marks each midnight at the
 * last close before it (times in Unix seconds, as the chart takes them). The first symbol's bars give the times; another symbol counts at its last close
 * up to then (its first one before it has any).
 */
export function buyAndHold(job: Job, bars: KlineRow[][], intervalMs: number): { time: number; value: number }[] {
  const start = new Date(job.config.start).getTime()
  const end = new Date(job.config.end).getTime()
  const inRun = bars.map((rows) => rows.filter((row) => Number(row[0]) >= start && Number(row[0]) < end).map((row) => ({ open: Number(row[0]), close: Number(row[4]) })))
  if (inRun.length === 0 || inRun.some((rows) => rows.length === 0)) return []
  const share = Number(job.config.capital) / inRun.length
  const cursors = inRun.map(() => 0)
  return inRun[0]!.map((bar) => {
    const value = inRun.reduce((sum, rows, k) => {
      while (cursors[k]! + 1 < rows.length && rows[cursors[k]! + 1]!.open <= bar.open) cursors[k]!++
      return sum + (share * rows[cursors[k]!]!.close) / rows[0]!.close
    }, 0)
    return { time: Math.min(bar.open + intervalMs, end) / 1000, value }
  })
}

const CSV_COLUMNS = ['id', 'symbol', 'side', 'entry_time', 'entry_price', 'exit_time', 'exit_price', 'qty', 'fee', 'funding', 'pnl', 'exit_reason'] as const

/** Every closed trade as CSV (RFC 4180, CRLF), the API's field names and exact values. */
export function tradesCsv(trades: BacktestTrade[]): string {
  const cell = (value: unknown) => {
    const text = value === undefined || value === null ? '' : String(value)
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
  }
  return [CSV_COLUMNS.join(','), ...trades.map((t) => CSV_COLUMNS.map((c) => cell((t as Record<string, unknown>)[c])).join(','))].join('\r\n') + '\r\n'
}

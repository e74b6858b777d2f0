import { cagr, calmarRatio, PERIODS_PER_YEAR } from '../../engine/metrics.js'
import { varianceFromShiftedSums } from './moments.js'
import { RangeDrawdown } from './range-drawdown.js'

/**
 * A backtest's metrics over a run of days of one configuration's daily returns, in the job result's
 * units (src/engine/metrics.ts: Sharpe and Sortino annualised with √365, CAGR over a 365-day year,
 * drawdown a fraction ≤ 0). Trades are not in the daily returns, so profit factor and win rate are
 * their daily forms (docs/decisions/sweeps.md, "Sweep statistics (issue 23)").
 */
export interface SliceMetrics {
  /** Compounded growth over the slice: Π(1 + r) − 1. */
  total_return: number
  /** (1 + total_return)^(365 / days) − 1, each return one day; null when it overflows. */
  cagr: number | null
  sharpe: number | null
  sortino: number | null
  max_drawdown: number
  calmar: number | null
  /** Σ positive daily returns / Σ |negative daily returns|; null without a losing day. */
  daily_profit_factor: number | null
  /** Days with a positive return / days with a non-zero return; null when every day was flat. */
  daily_win_rate: number | null
}

export type SliceMetricName = keyof SliceMetrics

/**
 * One configuration's prefix sums, so any slice's metric costs O(1) (drawdown O(log T)) however long the
 * slice: a walk-forward asks every configuration for every window, overlapping ones included. Sums
 * are of r − c, c the column's mean, for a variance without cancellation (moments.ts). A return ≤ −1
 * ruins the account: a slice holding one has total return −1 and drawdown −1.
 */
export class ColumnSlices {
  private rows = 0
  private shift = 0
  private sum = new Float64Array(1)
  private squares = new Float64Array(1)
  private downside = new Float64Array(1)
  private growth = new Float64Array(1)
  private ruins = new Int32Array(1)
  private gains = new Float64Array(1)
  private losses = new Float64Array(1)
  private ups = new Int32Array(1)
  private moves = new Int32Array(1)
  private readonly drawdown = new RangeDrawdown()
  private drawdownLoaded = false

  /** Points this instance at a new column, reusing its buffers. */
  load(column: Float64Array): this {
    const rows = column.length
    if (this.sum.length < rows + 1) {
      this.sum = new Float64Array(rows + 1)
      this.squares = new Float64Array(rows + 1)
      this.downside = new Float64Array(rows + 1)
      this.growth = new Float64Array(rows + 1)
      this.ruins = new Int32Array(rows + 1)
      this.gains = new Float64Array(rows + 1)
      this.losses = new Float64Array(rows + 1)
      this.ups = new Int32Array(rows + 1)
      this.moves = new Int32Array(rows + 1)
    }
    this.rows = rows
    let total = 0
    for (let t = 0; t < rows; t++) total += column[t]!
    const c = rows > 0 ? total / rows : 0
    this.shift = c
    for (let t = 0; t < rows; t++) {
      const r = column[t]!
      const d = r - c
      const ruined = r <= -1
      this.sum[t + 1] = this.sum[t]! + d
      this.squares[t + 1] = this.squares[t]! + d * d
      this.downside[t + 1] = this.downside[t]! + (r < 0 ? r * r : 0)
      this.growth[t + 1] = this.growth[t]! + (ruined ? 0 : Math.log1p(r))
      this.ruins[t + 1] = this.ruins[t]! + (ruined ? 1 : 0)
      this.gains[t + 1] = this.gains[t]! + (r > 0 ? r : 0)
      this.losses[t + 1] = this.losses[t]! + (r < 0 ? -r : 0)
      this.ups[t + 1] = this.ups[t]! + (r > 0 ? 1 : 0)
      this.moves[t + 1] = this.moves[t]! + (r !== 0 ? 1 : 0)
    }
    this.drawdownLoaded = false
    return this
  }

  get length(): number {
    return this.rows
  }

  /** One metric over rows from..to−1 (from < to ≤ length). */
  metric(name: SliceMetricName, from: number, to: number): number | null {
    switch (name) {
      case 'total_return':
        return this.totalReturn(from, to)
      case 'cagr':
        return cagr(1, 1 + this.totalReturn(from, to), to - from)
      case 'sharpe':
        return this.sharpe(from, to)
      case 'sortino':
        return this.sortino(from, to)
      case 'max_drawdown':
        return this.maxDrawdown(from, to)
      case 'calmar':
        return calmarRatio(cagr(1, 1 + this.totalReturn(from, to), to - from), this.maxDrawdown(from, to))
      case 'daily_profit_factor': {
        const lost = this.losses[to]! - this.losses[from]!
        return lost > 0 ? (this.gains[to]! - this.gains[from]!) / lost : null
      }
      case 'daily_win_rate': {
        const moved = this.moves[to]! - this.moves[from]!
        return moved > 0 ? (this.ups[to]! - this.ups[from]!) / moved : null
      }
    }
  }

  /** Every metric over rows from..to−1. */
  metrics(from: number, to: number): SliceMetrics {
    const growth = cagr(1, 1 + this.totalReturn(from, to), to - from)
    const drawdown = this.maxDrawdown(from, to)
    return {
      total_return: this.totalReturn(from, to),
      cagr: growth,
      sharpe: this.sharpe(from, to),
      sortino: this.sortino(from, to),
      max_drawdown: drawdown,
      calmar: calmarRatio(growth, drawdown),
      daily_profit_factor: this.metric('daily_profit_factor', from, to),
      daily_win_rate: this.metric('daily_win_rate', from, to),
    }
  }

  private ruined(from: number, to: number): boolean {
    return this.ruins[to]! > this.ruins[from]!
  }

  private totalReturn(from: number, to: number): number {
    return this.ruined(from, to) ? -1 : Math.expm1(this.growth[to]! - this.growth[from]!)
  }

  /** As sharpeRatio in src/engine/metrics.ts: mean / std (ddof 1) × √365; null below 2 days or without deviation. */
  private sharpe(from: number, to: number): number | null {
    const n = to - from
    if (n < 2) return null
    const s = this.sum[to]! - this.sum[from]!
    const variance = varianceFromShiftedSums(s, this.squares[to]! - this.squares[from]!, n)
    if (variance === 0) return null
    return ((this.shift + s / n) / Math.sqrt(variance)) * Math.sqrt(PERIODS_PER_YEAR)
  }

  /** As sortinoRatio in src/engine/metrics.ts: mean × 365 / (√(Σ min(r, 0)² / n) × √365). */
  private sortino(from: number, to: number): number | null {
    const n = to - from
    if (n < 2) return null
    const risk = Math.sqrt((this.downside[to]! - this.downside[from]!) / n) * Math.sqrt(PERIODS_PER_YEAR)
    if (!(risk > 0)) return null
    const mean = this.shift + (this.sum[to]! - this.sum[from]!) / n
    return (mean * PERIODS_PER_YEAR) / risk
  }

  /** The largest fall over the equity points from..to (the start of the slice included), ≤ 0. */
  private maxDrawdown(from: number, to: number): number {
    if (this.ruined(from, to)) return -1
    if (!this.drawdownLoaded) {
      this.drawdown.load(this.growth, this.rows + 1)
      this.drawdownLoaded = true
    }
    const fall = this.drawdown.largestFall(from, to)
    return fall > 0 ? Math.expm1(-fall) : 0
  }
}

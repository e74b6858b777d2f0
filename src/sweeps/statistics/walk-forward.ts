import { ColumnSlices, type SliceMetricName, type SliceMetrics } from './slice-metrics.js'

/**
 * The objectives a walk-forward can rank by, and the daily-slice metric each one reads. The job's
 * profit factor and win rate count closed trades, which daily returns do not hold: their daily forms
 * stand in. expected_value and total_trades have none (docs/decisions/sweeps.md, "Sweep statistics (issue 23)").
 */
export const WALK_FORWARD_OBJECTIVES: Readonly<Record<string, SliceMetricName>> = {
  sharpe: 'sharpe',
  sortino: 'sortino',
  calmar: 'calmar',
  cagr: 'cagr',
  total_return: 'total_return',
  max_drawdown: 'max_drawdown',
  profit_factor: 'daily_profit_factor',
  win_rate: 'daily_win_rate',
}

export interface WalkForwardInput {
  /** N columns of T daily returns, as for sweepStatistics. */
  returns: Float64Array[]
  /** Epoch ms of the day each return ends on (length T). */
  days: ArrayLike<number>
  in_sample_days: number
  out_of_sample_days: number
  /** true: every in-sample window starts at the first day; false (default): it rolls forward. */
  anchored?: boolean
  /** A key of WALK_FORWARD_OBJECTIVES; default sharpe. */
  objective?: string
  /** The stitched curve's first equity; default 1. */
  capital?: number
}

/** A run of days: rows from..to−1 of the returns, the first and last day's epoch ms. */
export interface DaySpan {
  from: number
  to: number
  first_day: number
  last_day: number
  days: number
}

export interface WalkForwardWindow {
  in_sample: DaySpan
  out_of_sample: DaySpan
  /** The configuration (column index) with the best objective in sample; the first of equals. */
  chosen: number
  /** Its objective in sample; null when no configuration's was defined (then the first is chosen). */
  in_sample_metric: number | null
  in_sample_metrics: SliceMetrics
  out_of_sample_metrics: SliceMetrics
  /** Its out-of-sample CAGR ÷ in-sample CAGR; null when the in-sample CAGR is ≤ 0 or undefined. */
  efficiency: number | null
}

export interface WalkForwardResult {
  objective: string
  anchored: boolean
  windows: WalkForwardWindow[]
  /** The stitched out-of-sample equity, [epoch ms, equity]: the day before the first window, then one point per day. */
  curve: [number, number][]
  /** Metrics of the stitched out-of-sample returns; null with no window. */
  metrics: SliceMetrics | null
  /** Mean over windows of the chosen configuration's in-sample CAGR. */
  in_sample_cagr: number | null
  /** Pardo's walk-forward efficiency: stitched out-of-sample CAGR ÷ mean in-sample CAGR; null when that is ≤ 0. */
  efficiency: number | null
  /** Why there are no windows, or why efficiency is null. */
  reason?: string
}

function empty(input: WalkForwardInput, reason: string): WalkForwardResult {
  return { objective: input.objective ?? 'sharpe', anchored: input.anchored ?? false, windows: [], curve: [], metrics: null, in_sample_cagr: null, efficiency: null, reason }
}

function inputProblem(input: WalkForwardInput): string | null {
  const { returns, days, in_sample_days: inDays, out_of_sample_days: outDays } = input
  if (returns.length === 0) return 'the sweep has no configurations'
  const rows = returns[0]!.length
  if (returns.some((column) => column.length !== rows)) return 'the configurations have different numbers of daily returns'
  if (days.length !== rows) return `${days.length} days for ${rows} daily returns`
  for (let j = 0; j < returns.length; j++) {
    const column = returns[j]!
    for (let t = 0; t < rows; t++) if (!Number.isFinite(column[t]!)) return `configuration ${j} has a non-finite return on row ${t}`
  }
  if (!Number.isInteger(inDays) || inDays < 2) return `in_sample_days must be an integer of at least 2 (got ${inDays})`
  if (!Number.isInteger(outDays) || outDays < 1) return `out_of_sample_days must be an integer of at least 1 (got ${outDays})`
  if (input.capital !== undefined && !(input.capital > 0 && Number.isFinite(input.capital))) return `capital must be a positive number (got ${input.capital})`
  const objective = input.objective ?? 'sharpe'
  if (!Object.hasOwn(WALK_FORWARD_OBJECTIVES, objective))
    return `objective ${objective} has no daily form for a walk-forward (one of ${Object.keys(WALK_FORWARD_OBJECTIVES).join(', ')})`
  if (rows < inDays + outDays) return `${rows} days of returns hold no window of ${inDays} in-sample and ${outDays} out-of-sample days`
  return null
}

/**
 * Prefix sums round a slice's metric by what came before it, so two configurations with the same days
 * in a window can differ in the last digits; within this band the days themselves are compared, and
 * equal days are a tie the earlier configuration keeps.
 */
function mayBeTie(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b))
}

function sameDays(a: Float64Array, b: Float64Array, from: number, to: number): boolean {
  for (let t = from; t < to; t++) if (a[t] !== b[t]) return false
  return true
}

function span(days: ArrayLike<number>, from: number, to: number): DaySpan {
  return { from, to, first_day: days[from]!, last_day: days[to - 1]!, days: to - from }
}

function ratio(out: number | null, inside: number | null): number | null {
  if (out === null || inside === null || !(inside > 0)) return null
  const value = out / inside
  return Number.isFinite(value) ? value : null
}

/**
 * Walk-forward over the sweep's daily returns (research/optimization.md §2): window k's out-of-sample
 * days are [L_is + k·L_oos, L_is + (k+1)·L_oos), its in-sample days the L_is before them (rolling) or
 * all days before them (anchored); K = ⌊(T − L_is) / L_oos⌋ windows, a partial last one dropped. In
 * each, the configuration with the best objective in sample is traded out of sample; those days'
 * returns, in order, compound into the stitched curve. Stitching switches configuration at the window
 * boundary (§2.3 (a)) from the sweep's whole-period runs, so a position open at the boundary is the
 * run's, not a fresh start's.
 */
export function walkForward(input: WalkForwardInput): WalkForwardResult {
  const problem = inputProblem(input)
  if (problem) return empty(input, problem)
  const { returns, days, in_sample_days: inDays, out_of_sample_days: outDays } = input
  const anchored = input.anchored ?? false
  const objective = input.objective ?? 'sharpe'
  const metric = WALK_FORWARD_OBJECTIVES[objective]!
  const rows = returns[0]!.length
  const count = Math.floor((rows - inDays) / outDays)
  const inFrom = (k: number) => (anchored ? 0 : k * outDays)
  const outFrom = (k: number) => inDays + k * outDays

  // Configuration-major: one column's prefix sums at a time, every window asked of it.
  const bestValue = new Float64Array(count).fill(-Infinity)
  const bestIndex = new Int32Array(count).fill(-1)
  const slices = new ColumnSlices()
  for (let j = 0; j < returns.length; j++) {
    const column = returns[j]!
    slices.load(column)
    for (let k = 0; k < count; k++) {
      const value = slices.metric(metric, inFrom(k), outFrom(k))
      if (value === null) continue
      const incumbent = bestIndex[k]!
      if (incumbent !== -1 && !(value > bestValue[k]!)) continue
      if (incumbent !== -1 && mayBeTie(value, bestValue[k]!) && sameDays(returns[incumbent]!, column, inFrom(k), outFrom(k))) continue
      bestValue[k] = value
      bestIndex[k] = j
    }
  }

  const stitched = new Float64Array(count * outDays)
  const windows: WalkForwardWindow[] = []
  let inSampleCagrSum = 0
  let inSampleCagrMissing = false
  for (let k = 0; k < count; k++) {
    const chosen = Math.max(0, bestIndex[k]!)
    const column = returns[chosen]!
    slices.load(column)
    const isFrom = inFrom(k)
    const oosFrom = outFrom(k)
    const oosTo = oosFrom + outDays
    const inMetrics = slices.metrics(isFrom, oosFrom)
    const outMetrics = slices.metrics(oosFrom, oosTo)
    stitched.set(column.subarray(oosFrom, oosTo), k * outDays)
    if (inMetrics.cagr === null) inSampleCagrMissing = true
    else inSampleCagrSum += inMetrics.cagr
    windows.push({
      in_sample: span(days, isFrom, oosFrom),
      out_of_sample: span(days, oosFrom, oosTo),
      chosen,
      in_sample_metric: bestIndex[k] === -1 ? null : bestValue[k]!,
      in_sample_metrics: inMetrics,
      out_of_sample_metrics: outMetrics,
      efficiency: ratio(outMetrics.cagr, inMetrics.cagr),
    })
  }

  let equity = input.capital ?? 1
  const curve: [number, number][] = [[days[inDays - 1]!, equity]]
  for (let t = 0; t < stitched.length; t++) {
    equity = stitched[t]! <= -1 ? 0 : equity * (1 + stitched[t]!)
    curve.push([days[inDays + t]!, equity])
  }
  const metrics = slices.load(stitched).metrics(0, stitched.length)
  const inSampleCagr = inSampleCagrMissing ? null : inSampleCagrSum / count
  const efficiency = ratio(metrics.cagr, inSampleCagr)
  const result: WalkForwardResult = { objective, anchored, windows, curve, metrics, in_sample_cagr: inSampleCagr, efficiency }
  if (efficiency === null)
    result.reason = inSampleCagr === null ? 'an in-sample CAGR overflowed' : metrics.cagr === null ? 'the out-of-sample CAGR overflowed' : 'the mean in-sample CAGR is ≤ 0: efficiency is undefined'
  return result
}

import type { SingleSymbolSignal } from '../templates/types.js'
import type { DailyCurve } from './daily-curve.js'
import type { ExitGuard } from './exit-guard.js'
import type { Ledger } from './ledger.js'
import { gridError } from './range.js'
import type { BarGap, BarSeries, FundingSeries } from './types.js'

/**
 * The one-symbol engine, runnable a bar at a time: the only copy of the fill, fee, funding and
 * liquidation order. simulateSingle runs it over a whole series; a live runner's paper broker runs it
 * over each bar as it closes (DESIGN §6: a dry run and a backtest over the same bars agree to the last
 * digit, because they are the same code).
 *
 * Bar i: at its open, settle the funding events due (open_time ≤ T < open_time + interval; an event
 * inside a gap settles at the first bar after it), liquidate a carried position the open already crossed,
 * fill the pending order; then check the bar's low/high against the liquidation price; at its close, ask
 * the template for a new target, filled at the next bar's open. Before the open, the daily curve records
 * the midnights reached, marked at the previous close.
 *
 * A runner may swap longer arrays into the series or the funding between calls: run() reads them afresh.
 *
 * Given a `gaps` list (a backtest), the loop also checks each open time against the interval grid, records
 * the missing bars there and throws on unsorted or off-grid bars, as findGaps does; a runner passes none
 * and sees no change.
 *
 * With protective exits (`guard`), the open also exits a carried position whose levels it crossed (after
 * the liquidation check, before the fill), and the bar is walked on its examined bars (ExitGuard) instead
 * of the low/high liquidation check; targets pass the latch, and a signal's levels are handed on.
 */
export class SingleSymbolStepper {
  /** The target fraction waiting for the next bar's open; NaN when none. */
  pending = Number.NaN
  /** Index of the next funding event to settle. */
  fundingIndex = 0
  /** The signal's targets for the bars of a run (SingleSymbolSignal.onBars), grown as needed. */
  private targets = new Float64Array(0)
  /** The open time the next bar should have: the previous bar's plus the interval (NaN before any bar, or without `gaps`). */
  expected: number
  /** Protective exits, when the run has any (ExitRules or a signal with levels); set before the first run(). */
  guard: ExitGuard | undefined
  /** The levels a signal states for a run of bars (onBars), grown as needed. */
  private levelBatch = new Float64Array(0)

  /** `start`: the first open time a backtest expects a bar at (with `gaps` only). */
  constructor(
    readonly ledger: Ledger,
    readonly curve: DailyCurve,
    readonly series: BarSeries,
    readonly funding: FundingSeries,
    readonly signal: SingleSymbolSignal,
    readonly gaps?: BarGap[],
    start = Number.NaN,
  ) {
    this.expected = gaps ? Math.ceil(start / series.intervalMs) * series.intervalMs : Number.NaN
  }

  /**
   * Runs bars from ≤ i < to. The loop lives here, with its state in locals, rather than a step(i) per
   * bar: a method call per bar made bench/backtest.ts a third slower (88 ms against 66 ms for 2.6 M bars).
   * The grid check shares a test with the midnight and funding checks, on the open time the loop reads
   * anyway: as a pass of its own before the loop (findGaps) it cost 5–13 % of bench/backtest.ts, and as a
   * test of its own in the loop about as much (issue 13).
   */
  run(from: number, to: number): void {
    const { ledger, curve, series, signal } = this
    const { openTime, open, high, low, close } = series
    const interval = series.intervalMs
    const { time: fundingTime, rate: fundingRate, markPrice: fundingMark } = this.funding
    const fundingCount = fundingTime.length
    const qty = ledger.qty
    const liq = ledger.liq
    let f = this.fundingIndex
    let nextFunding = f < fundingCount ? fundingTime[f]! : Infinity
    let pending = this.pending
    let expected = this.expected
    // With exits a bar's slow path is guardedBar(), and the loop reads this.guard rather than a local: its
    // state inline here, live across the loop, made bench/backtest.ts (no exits) ~5 % slower (49.5 against
    // 46.9 ms of CPU).
    // A run of bars asks the signal for all its targets first (a signal never reads the ledger, so this is
    // the same as asking bar by bar); one bar at a time (a runner) keeps onBar's order: fill, then signal.
    const batch = to - from > 1 && signal.onBars !== undefined
    let targets = this.targets
    // The batch has the signal's levels; `stated` moves forward to the next bar that states one.
    let levelled = false
    let stated = from
    if (batch) {
      if (targets.length < to - from) targets = this.targets = new Float64Array(to - from)
      if (this.guard === undefined || signal.levels === undefined) {
        signal.onBars!(from, to, targets)
      } else {
        if (this.levelBatch.length < 2 * (to - from)) this.levelBatch = new Float64Array(2 * (to - from))
        this.levelBatch.fill(Number.NaN)
        signal.onBars!(from, to, targets, this.levelBatch)
        levelled = true
      }
    }

    const gaps = this.gaps
    // Bars before nextEvent need neither the curve nor funding; the exact tests run from it on. It is at
    // most two intervals early for funding, so that rounding in nextFunding − 2 × interval cannot skip one.
    let nextEvent = Math.min(curve.nextDay, nextFunding - 2 * interval)

    let i = from
    while (i < to) {
      // Quiet bars are skimmed without exits, or while the guard has nothing to check (idle: no rules and no
      // level in force, pending or stated up to `end`, as for a custom module that answers numbers): its walk
      // would repeat the skim's liquidation check. Otherwise a held position's every bar is walked. Measured
      // (sma_cross over bench/backtest.ts's 2.6 M bars, its signal given levels it never states): 100–105 ms
      // of CPU walking every bar, 59 ms skimming, 47–49 ms for the signal without levels.
      if (batch && (this.guard === undefined || this.guard.idle(0))) {
        let end = to
        if (levelled) {
          const levels = this.levelBatch
          if (stated < i) stated = i
          while (stated < to && levels[2 * (stated - from)] !== levels[2 * (stated - from)] && levels[2 * (stated - from) + 1] !== levels[2 * (stated - from) + 1]) stated++
          end = stated
        }
        // Quiet bars: on the grid, no midnight or funding, nothing to fill, no liquidation at the open or
        // inside the bar. Such a bar only hands its target on; the loop below handles any other bar, so
        // it stays the one place where money moves. Without calls in it, this loop keeps its state in
        // registers.
        const q = qty[0]!
        const level = liq[0]!
        for (; i < end; i++) {
          const t = openTime[i]!
          if (t !== expected || t >= nextEvent || pending === pending) break
          const price = open[i]!
          if (!(price > 0 && close[i]! > 0)) break
          if (q !== 0 && (q > 0 ? price <= level || low[i]! <= level : price >= level || high[i]! >= level)) break
          expected = t + interval
          const target = targets[i - from]!
          if (target === target) pending = clampFraction(target)
        }
        if (i >= to) break
      }
      const t = openTime[i]!
      // One test for three rare things: a bar off the expected grid time, a midnight, a funding event.
      if (t !== expected || t >= nextEvent) {
        if (t !== expected) offGrid(gaps, series, i, expected)
        if (t >= curve.nextDay) curve.reach(t, i === 0 ? ledger.cash : ledger.cash + ledger.unrealized(0, close[i - 1]!))
        const price = open[i]!
        if (!(price > 0 && close[i]! > 0)) throw corruptBar(series, i)
        while (nextFunding < t + interval) {
          const mark = fundingMark[f]!
          ledger.settleFunding(0, fundingRate[f]!, mark > 0 ? mark : price)
          f++
          nextFunding = f < fundingCount ? fundingTime[f]! : Infinity
        }
        nextEvent = Math.min(curve.nextDay, nextFunding - 2 * interval)
      }
      expected = t + interval
      const price = open[i]!
      // Fail fast on corrupt data; both values are read anyway (the fill and the template), so this is free.
      if (!(price > 0 && close[i]! > 0)) throw corruptBar(series, i)
      let q = qty[0]!
      if (q !== 0 && (q > 0 ? price <= liq[0]! : price >= liq[0]!)) {
        ledger.liquidate(0, t)
        q = 0
      }
      const guard = this.guard
      if (guard === undefined) {
        if (pending === pending) {
          ledger.applyTarget(0, pending, price, t)
          pending = Number.NaN
          q = qty[0]!
        }
        if (q !== 0 && (q > 0 ? low[i]! <= liq[0]! : high[i]! >= liq[0]!)) ledger.liquidate(0, t + interval - 1)
        const target = batch ? targets[i - from]! : signal.onBar(i)
        if (target === target) pending = clampFraction(target)
      } else {
        pending = this.guardedBar(guard, i, pending, batch ? i - from : -1)
      }
      i++
    }

    this.fundingIndex = f
    this.pending = pending
    this.expected = expected
  }

  /**
   * Bar i after its funding and its liquidation check at the open, with protective exits: the carried
   * position's levels at the open, the fill (through the latch), the walk through the bar, then the
   * signal's target (batch index k of this run's targets, or −1 to ask onBar) and levels. Returns the
   * target pending for the next open.
   */
  private guardedBar(guard: ExitGuard, i: number, pending: number, k: number): number {
    const { ledger, series, signal } = this
    const t = series.openTime[i]!
    if (ledger.qty[0] !== 0) guard.atOpen(0, series, i)
    if (pending === pending) {
      if (guard.admits(0, pending)) {
        ledger.applyTarget(0, pending, series.open[i]!, t)
        guard.filled(0, pending)
      }
      pending = Number.NaN
    }
    guard.walk(0, series, i, i > 0 ? series.close[i - 1]! : Number.NaN)
    const stated = signal.levels
    let target: number
    if (k >= 0) {
      target = this.targets[k]!
      if (stated !== undefined) guard.stated(0, this.levelBatch[2 * k]!, this.levelBatch[2 * k + 1]!)
    } else {
      if (stated !== undefined) stated.fill(Number.NaN)
      target = signal.onBar(i)
      if (stated !== undefined) guard.stated(0, stated[0]!, stated[1]!)
    }
    if (target === target && guard.admits(0, clampFraction(target))) pending = clampFraction(target)
    return pending
  }
}

/** Bar i opens elsewhere than `expected`: a gap to record, or corrupt input; nothing without a gaps list (a runner). */
function offGrid(gaps: BarGap[] | undefined, series: BarSeries, i: number, expected: number): void {
  if (gaps === undefined) return
  const t = series.openTime[i]!
  const interval = series.intervalMs
  if (t < expected || t % interval !== 0) throw gridError(series, i, expected)
  gaps.push({ symbol: series.symbol, from: expected, to: t - interval })
}

export function corruptBar(series: BarSeries, i: number): RangeError {
  return new RangeError(`${series.symbol}: the bar at ${series.openTime[i]} has a missing or non-positive open or close`)
}

export function clampFraction(x: number): number {
  return x > 1 ? 1 : x < -1 ? -1 : x
}

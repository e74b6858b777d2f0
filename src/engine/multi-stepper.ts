import type { MultiSymbolSignal } from '../templates/types.js'
import type { DailyCurve } from './daily-curve.js'
import type { ExitGuard } from './exit-guard.js'
import type { Ledger } from './ledger.js'
import { clampFraction, corruptBar } from './single-stepper.js'
import type { BarSeries, FundingSeries } from './types.js'

/**
 * The many-symbol engine, runnable a time step at a time: the only copy of its fill, fee, funding and
 * liquidation order. simulateMulti runs it over the union of the series' open times; a live runner's paper
 * broker runs it over each step as the step's bars close (DESIGN §6: a dry run and a backtest over the same
 * bars agree to the last digit, because they are the same code).
 *
 * Step t (an open time), for every symbol s with a bar at t (`at[s]` its index, −1 for none): settle the
 * funding events due (time < t + interval), liquidate a carried position the open already crossed; then fill
 * the pending targets of the symbols with a bar, sized on the account's equity (cash + every position marked
 * at this step's opens, last closes for symbols without a bar); then check each bar's low/high against the
 * liquidation price; at the close, ask the signal for new targets (Σ|targets| above 1 is scaled down), filled
 * at each symbol's next bar. Before the step, the daily curve records the midnights reached, marked at the
 * last closes. Orders for a symbol without a bar at a step wait for its next bar.
 *
 * A runner may swap longer arrays into the series or the funding between calls: step() reads them afresh.
 *
 * With protective exits (`guard`), each symbol follows SingleSymbolStepper's order: a carried position
 * exits at the open when its levels were crossed (before the step's fills), each bar is walked on its
 * examined bars, targets pass the latch and a signal's levels are handed on.
 */
export class MultiSymbolStepper {
  /** The target fraction per symbol waiting for its next bar's open; NaN when none. */
  readonly pending: Float64Array
  /** Per symbol, the index of the next funding event to settle. */
  readonly fundingIndex: Int32Array
  /** The last close seen per symbol (NaN before its first bar): positions are marked there between its bars. */
  readonly lastClose: Float64Array
  private readonly mark: Float64Array
  private readonly targets: Float64Array
  /** Protective exits, when the run has any (ExitRules or a signal with levels); set before the first step(). */
  guard: ExitGuard | undefined

  constructor(
    readonly ledger: Ledger,
    readonly curve: DailyCurve,
    readonly bars: readonly BarSeries[],
    readonly funding: readonly FundingSeries[],
    readonly signal: MultiSymbolSignal,
  ) {
    const count = bars.length
    this.pending = new Float64Array(count).fill(Number.NaN)
    this.fundingIndex = new Int32Array(count)
    this.lastClose = new Float64Array(count).fill(Number.NaN)
    this.mark = new Float64Array(count).fill(Number.NaN)
    this.targets = new Float64Array(count)
  }

  /** Cash plus every open position marked at `prices`. */
  equityAt(prices: Float64Array): number {
    const { ledger } = this
    let equity = ledger.cash
    for (let s = 0; s < this.bars.length; s++) if (ledger.qty[s] !== 0) equity += ledger.unrealized(s, prices[s]!)
    return equity
  }

  /** One time step at open time `t`; `at[s]` is the index of symbol s's bar at t, or −1. */
  step(t: number, at: Int32Array): void {
    const { ledger, curve, bars, pending, mark, lastClose } = this
    const count = bars.length
    const interval = bars[0]!.intervalMs
    const qty = ledger.qty
    const liq = ledger.liq
    const guard = this.guard
    if (t >= curve.nextDay) curve.reach(t, this.equityAt(lastClose))
    let anyPending = false
    for (let s = 0; s < count; s++) {
      const i = at[s]!
      const series = bars[s]!
      mark[s] = i >= 0 ? series.open[i]! : lastClose[s]!
      if (i < 0) continue
      const price = series.open[i]!
      if (!(price > 0 && series.close[i]! > 0)) throw corruptBar(series, i)
      const funding = this.funding[s]!
      let f = this.fundingIndex[s]!
      while (f < funding.time.length && funding.time[f]! < t + interval) {
        const recorded = funding.markPrice[f]!
        ledger.settleFunding(s, funding.rate[f]!, recorded > 0 ? recorded : price)
        f++
      }
      this.fundingIndex[s] = f
      const q = qty[s]!
      if (q !== 0 && (q > 0 ? price <= liq[s]! : price >= liq[s]!)) ledger.liquidate(s, t)
      if (guard !== undefined && qty[s] !== 0) guard.atOpen(s, series, i)
      if (pending[s] === pending[s]) anyPending = true
    }
    if (anyPending) {
      const equity = this.equityAt(mark)
      for (let s = 0; s < count; s++) {
        if (at[s]! < 0 || pending[s] !== pending[s]) continue
        const price = mark[s]!
        if (guard === undefined || guard.admits(s, pending[s]!)) {
          ledger.moveTo(s, ledger.targetQty(s, pending[s]!, equity, price), price, t)
          if (guard !== undefined) guard.filled(s, pending[s]!)
        }
        pending[s] = Number.NaN
      }
    }
    for (let s = 0; s < count; s++) {
      const i = at[s]!
      if (i < 0) continue
      const series = bars[s]!
      if (guard !== undefined) {
        guard.walk(s, series, i, lastClose[s]!)
      } else {
        const q = qty[s]!
        if (q !== 0 && (q > 0 ? series.low[i]! <= liq[s]! : series.high[i]! >= liq[s]!)) ledger.liquidate(s, t + interval - 1)
      }
      lastClose[s] = series.close[i]!
    }
    this.ask(at, true)
  }

  /**
   * A warm-up step of a run: the signal sees the step's bars (its state advances exactly as in a backtest
   * starting at the warm-up boundary), the ledger does not. A target stated there would break the warm-up
   * contract and is dropped, as the single-symbol runner drops it.
   */
  warmStep(at: Int32Array): void {
    for (let s = 0; s < this.bars.length; s++) if (at[s]! >= 0) this.lastClose[s] = this.bars[s]!.close[at[s]!]!
    this.ask(at, false)
  }

  private ask(at: Int32Array, keep: boolean): void {
    const { targets, pending, guard } = this
    const count = this.bars.length
    const levels = guard === undefined ? undefined : this.signal.levels
    targets.fill(Number.NaN)
    if (levels !== undefined) levels.fill(Number.NaN)
    const wrote = this.signal.onStep(at, targets)
    if (!keep) return
    if (levels !== undefined) for (let s = 0; s < count; s++) guard!.stated(s, levels[2 * s]!, levels[2 * s + 1]!)
    if (!wrote) return
    let gross = 0
    for (let s = 0; s < count; s++) if (targets[s] === targets[s]) gross += Math.abs(clampFraction(targets[s]!))
    const scale = gross > 1 ? 1 / gross : 1
    for (let s = 0; s < count; s++) {
      if (targets[s] !== targets[s]) continue
      const target = clampFraction(targets[s]!) * scale
      if (guard === undefined || guard.admits(s, target)) pending[s] = target
    }
  }
}

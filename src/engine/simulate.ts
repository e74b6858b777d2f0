import type { MultiSymbolSignal, SingleSymbolSignal } from '../templates/types.js'
import { DailyCurve } from './daily-curve.js'
import { ExitGuard, MissingMarkBars } from './exit-guard.js'
import { Ledger } from './ledger.js'
import { findGaps, trailingGap } from './range.js'
import { MultiSymbolStepper } from './multi-stepper.js'
import { SingleSymbolStepper } from './single-stepper.js'
import type { BarGap, BarSeries, DetailBars, ExitRules, FeeRates, FundingSeries, SymbolRules } from './types.js'

/** Thrown out of a run when onProgress answers false. */
export class BacktestCancelledError extends Error {
  constructor(readonly progress: number) {
    super('backtest cancelled')
    this.name = 'BacktestCancelledError'
  }
}

export interface SimulationSetup {
  /** Bars inside [start, end] only, one series per symbol, all of one interval. */
  bars: readonly BarSeries[]
  /** One per symbol (empty arrays when a symbol has no funding history). */
  funding: readonly FundingSeries[]
  rules: readonly SymbolRules[]
  capital: number
  leverage: number
  fees: FeeRates
  /** Inclusive bounds on bar open times: gaps are reported against them. */
  start: number
  end: number
  /** Called every PROGRESS_EVERY bars with the fraction done; answering false cancels the run. */
  onProgress?: ((fraction: number) => boolean) | undefined
  /** Protective exits derived from each position's entry price (ExitGuard); a signal's levels need none. */
  exits?: ExitRules | undefined
  /** Worsens every market fill (entries, target changes, protective exits) by this many basis points; default 0. */
  slippageBps?: number | undefined
  /** Per symbol, finer (and mark-price) bars that protective exits are examined on. */
  detail?: readonly (DetailBars | undefined)[] | undefined
}

export interface Simulation {
  ledger: Ledger
  curve: DailyCurve
  /** The last close seen per symbol (NaN for a symbol without bars): open positions are marked there. */
  lastClose: Float64Array
  /** Missing bars in [start, end], symbol by symbol (findGaps). */
  gaps: BarGap[]
  /** The run's protective exits, when it had any. */
  guard: ExitGuard | undefined
}

// 2^16 bars between progress calls: ~3 ms of work at 20 M bars/s, so a cancel lands well within a second.
const PROGRESS_MASK = 0xffff

/**
 * The bar loop for one symbol: SingleSymbolStepper over the whole series, in chunks between progress calls.
 * Kept separate from the many-symbol loop because it is the hot path: nothing allocates per bar.
 */
export function simulateSingle(setup: SimulationSetup, signal: SingleSymbolSignal): Simulation {
  const series = setup.bars[0]!
  const ledger = new Ledger([series.symbol], setup.rules, setup.capital, setup.leverage, setup.fees.takerRate)
  const curve = new DailyCurve(setup.start, setup.capital)
  const gaps: BarGap[] = []
  const stepper = new SingleSymbolStepper(ledger, curve, series, setup.funding[0]!, signal, gaps, setup.start)
  const guard = (stepper.guard = protect(setup, ledger, signal.levels !== undefined))
  const { openTime, close } = series
  const n = openTime.length
  const onProgress = setup.onProgress

  try {
    for (let from = 0; from < n; from += PROGRESS_MASK + 1) {
      const to = Math.min(n, from + PROGRESS_MASK + 1)
      stepper.run(from, to)
      if ((to & PROGRESS_MASK) === 0 && onProgress && onProgress(to / n) === false) throw new BacktestCancelledError(to / n)
    }
  } catch (error) {
    // The grid check used to run over the whole series before the loop, so an unsorted or off-grid bar
    // anywhere won over whatever the loop throws first (a corrupt price, a cancel): it still does.
    findGaps(series, setup.start, setup.end)
    throw error
  }
  trailingGap(gaps, series, stepper.expected, setup.end)

  const lastClose = new Float64Array([n > 0 ? close[n - 1]! : Number.NaN])
  if (n > 0) curve.finish(openTime[n - 1]! + series.intervalMs, ledger.cash + ledger.unrealized(0, lastClose[0]!))
  return { ledger, curve, lastClose, gaps, guard }
}

/**
 * The bar loop for several symbols: MultiSymbolStepper over the union of their open times (a run's paper
 * broker steps the same code as steps close). Each symbol follows the same order as in simulateSingle at
 * its own bars; orders for a symbol without a bar at a step wait for its next bar. Sizing uses the
 * account's equity: cash + every position marked at this step's opens (last closes for symbols without a
 * bar now).
 */
export function simulateMulti(setup: SimulationSetup, signal: MultiSymbolSignal): Simulation {
  const symbols = setup.bars.map((b) => b.symbol)
  const count = symbols.length
  const gaps = setup.bars.flatMap((series) => findGaps(series, setup.start, setup.end))
  const ledger = new Ledger(symbols, setup.rules, setup.capital, setup.leverage, setup.fees.takerRate)
  const curve = new DailyCurve(setup.start, setup.capital)
  const stepper = new MultiSymbolStepper(ledger, curve, setup.bars, setup.funding, signal)
  const guard = (stepper.guard = protect(setup, ledger, signal.levels !== undefined))
  const timeline = mergeOpenTimes(setup.bars)
  const interval = setup.bars[0]?.intervalMs ?? 0
  const cursor = new Int32Array(count)
  const at = new Int32Array(count)

  for (let step = 0; step < timeline.length; step++) {
    const t = timeline[step]!
    for (let s = 0; s < count; s++) {
      const i = cursor[s]!
      const has = i < setup.bars[s]!.openTime.length && setup.bars[s]!.openTime[i] === t
      at[s] = has ? i : -1
      if (has) cursor[s] = i + 1
    }
    stepper.step(t, at)
    if ((step & PROGRESS_MASK) === PROGRESS_MASK && setup.onProgress && setup.onProgress((step + 1) / timeline.length) === false) {
      throw new BacktestCancelledError((step + 1) / timeline.length)
    }
  }

  const lastClose = stepper.lastClose
  if (timeline.length > 0) curve.finish(timeline[timeline.length - 1]! + interval, stepper.equityAt(lastClose))
  return { ledger, curve, lastClose, gaps, guard }
}

/** Sorted union of the series' open times. */
function mergeOpenTimes(bars: readonly BarSeries[]): Float64Array {
  const all = new Set<number>()
  for (const series of bars) for (const t of series.openTime) all.add(t)
  return Float64Array.from(all).sort()
}

/**
 * Sets the run's slippage on the ledger, and makes its ExitGuard when the run has exits (ExitRules, or a
 * signal stating levels). Trigger mark with no mark-price bars for a symbol throws MissingMarkBars: the
 * run never falls back to last prices silently.
 */
function protect(setup: SimulationSetup, ledger: Ledger, signalLevels: boolean): ExitGuard | undefined {
  ledger.slippage = (setup.slippageBps ?? 0) / 10_000
  if (setup.exits === undefined && !signalLevels) return undefined
  if (setup.exits?.trigger === 'mark') {
    setup.bars.forEach((series, s) => {
      if (!(setup.detail?.[s]?.mark ?? []).some((mark) => mark.openTime.length > 0)) throw new MissingMarkBars(series.symbol)
    })
  }
  return new ExitGuard(ledger, setup.exits, setup.bars[0]!.intervalMs, setup.detail)
}

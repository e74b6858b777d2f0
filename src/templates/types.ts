import type { Static, TObject } from 'typebox'
import type { BarSeries, FundingSeries, SymbolRules } from '../engine/types.js'

/**
 * What a template sees: the bars of its symbols (only bars inside the backtest's [start, end], or the
 * live runner's history), their funding events and exchange filters. The live runner may swap a
 * series' arrays as it grows them, so signals read through the BarSeries object on every call.
 */
export interface TemplateContext {
  bars: readonly BarSeries[]
  funding: readonly FundingSeries[]
  rules: readonly SymbolRules[]
}

/**
 * A one-symbol decision maker, fed bar by bar in order. `onBar(i)` runs once bar i has closed and may
 * read bars 0..i only; it returns the new target position as a signed fraction of equity in [−1, 1]
 * (1 = all in long, −1 = all in short, 0 = flat), or NaN to keep the current target.
 */
export interface SingleSymbolSignal {
  onBar(i: number): number
  /**
   * Optional: targets[k] = what onBar(from + k) would answer, for from ≤ from + k < to, in one call (the
   * state advances as if onBar had been called for each). A signal reads bars only, never the ledger, so
   * the engine may ask for a run of bars before filling them; a loop in one call keeps the indicator's
   * state in locals instead of object fields per bar. A signal with `levels` writes the levels of bar
   * from + k into levels[2k] (stop) and levels[2k + 1] (take profit); the engine NaN-fills them first.
   */
  onBars?(from: number, to: number, targets: Float64Array, levels?: Float64Array): void
  /**
   * Optional: protective levels for the position the target leaves, re-stated at a bar's close (a
   * module's stop_price and take_profit_price). levels[0] is a stop price, levels[1] a take-profit price;
   * the engine sets both to NaN before each onBar call, and the signal writes NaN = keep, 0 = remove,
   * > 0 = set. A set level replaces the run's config-derived level of its side (ExitRules) while set.
   */
  readonly levels?: Float64Array
}

/**
 * A many-symbol decision maker, fed once per time step. `at[s]` is the index of symbol s's bar that
 * closed at this step, or −1 when symbol s has no bar then (a gap or not yet listed). It writes new
 * targets into `targets[s]` (left NaN = keep) and returns true when it wrote any. Σ|targets| should not
 * exceed 1; the engine scales them down when it does.
 */
export interface MultiSymbolSignal {
  onStep(at: Int32Array, targets: Float64Array): boolean
  /**
   * Optional: protective levels per symbol, as SingleSymbolSignal.levels: levels[2s] a stop price and
   * levels[2s + 1] a take-profit price for symbol s, NaN-filled by the engine before each onStep call.
   */
  readonly levels?: Float64Array
}

/**
 * What is wrong with a request's template, params or symbols: the field at fault (`params.fast`) and a
 * sentence naming it. Templates return it; the edge answers it as 400 INVALID_PARAMETER (http/errors.ts).
 */
export interface ParamProblem {
  field: string
  message: string
}

/** A checked value, or the first problem with it. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: ParamProblem }

interface TemplateBase<S extends TObject> {
  id: string
  description: string
  /** TypeBox schema of params: every property has a default and bounds; additionalProperties false. */
  schema: S
  /** Smallest capital (quote currency) a strategy of this template may be deployed or backtested with. */
  minCapital: number
  /** Rules across fields the schema cannot state (fast < slow), checked after it; returns the first problem. */
  refine?(params: Static<S>): ParamProblem | undefined
  /**
   * The warm-up, one definition for backtests and runners: the closed bars the template reads before it
   * may first state a target. Its signal answers NaN (no change) for every bar index below this, so a
   * backtest starting at a bar and a runner fed exactly this many closed bars before it acts see the same
   * template state at the first bar that may trade. A runner fetches this many recent closed bars at start.
   */
  warmupBars(params: Static<S>, intervalMs: number): number
}

export interface SingleSymbolTemplate<S extends TObject = TObject> extends TemplateBase<S> {
  multiSymbol: false
  create(context: TemplateContext, params: Static<S>): SingleSymbolSignal
}

export interface MultiSymbolTemplate<S extends TObject = TObject> extends TemplateBase<S> {
  multiSymbol: true
  /** Fewest symbols the template needs. */
  minSymbols: number
  create(context: TemplateContext, params: Static<S>): MultiSymbolSignal
}

export type Template = SingleSymbolTemplate | MultiSymbolTemplate

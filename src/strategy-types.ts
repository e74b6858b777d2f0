/**
 * The strategy module contract (issue 22) as TypeScript types for authors: `import type { … } from
 * 'perpetua/strategy'`. Types only: nothing here runs, in the service or in a module. A module imports
 * them with `import type` (or an import only types use), which is removed when its types are stripped at
 * upload; an import of a value would stay, and imports fail inside the sandbox. docs/strategy-authors-guide.md explains
 * every rule these types cannot state.
 */

/** An integer parameter: a whole-number default within [minimum, maximum]. */
export interface IntegerParam {
  type: 'integer'
  default: number
  minimum: number
  maximum: number
  /** At most 500 characters. */
  description?: string
}

/** A number parameter (float64): a finite default within [minimum, maximum]. */
export interface NumberParam {
  type: 'number'
  default: number
  minimum: number
  maximum: number
  /** At most 500 characters. */
  description?: string
}

/** A boolean parameter: a default and no bounds. */
export interface BooleanParam {
  type: 'boolean'
  default: boolean
  /** At most 500 characters. */
  description?: string
}

export type ParamDeclaration = IntegerParam | NumberParam | BooleanParam

/**
 * `export const params`: every parameter by name (a letter or _ then letters, digits or _, at most 64;
 * at most 50 parameters). Declare it with `satisfies StrategyParams` to keep its literal types for
 * ParamValues.
 */
export type StrategyParams = Record<string, ParamDeclaration>

/** The values validate, warmup and create receive for a params declaration: defaults applied, bounds checked. */
export type ParamValues<P extends StrategyParams> = { -readonly [K in keyof P]: P[K] extends BooleanParam ? boolean : number }

/** A problem across parameters that validate reports, e.g. `{ field: 'params.fast', message: 'params.fast must be less than params.slow' }`. */
export interface ParamProblem {
  field: string
  message: string
}

/** A symbol's exchange filters, as create's ctx.rules gives them. */
export interface SymbolRules {
  tick_size: number
  step_size: number
  min_qty: number
  min_notional: number
}

/** What create receives beside the params. */
export interface StrategyContext {
  /** The run's symbols, in the order the run was given them (one for a single-symbol module). */
  symbols: string[]
  /** The run's bar interval, e.g. '1h'. */
  timeframe: string
  /** The same interval in milliseconds. */
  interval_ms: number
  /** Each symbol's filters, by symbol. */
  rules: Record<string, SymbolRules>
}

/** One closed bar. A fresh object each time: a module may keep it. Numbers are float64. */
export interface Bar {
  symbol: string
  /** Epoch milliseconds; the bar closes at open_time + interval_ms. */
  open_time: number
  open: number
  high: number
  low: number
  close: number
  /** Base-asset volume. */
  volume: number
  /** Quote-asset volume (klines field 7). */
  quote_volume: number
  /** Number of trades in the bar (klines field 8). */
  trades: number
}

/** One funding settlement, delivered before the first bar whose close is after it. */
export interface FundingEvent {
  symbol: string
  /** Epoch milliseconds of the settlement. */
  time: number
  /** The funding rate: longs pay a positive rate, shorts receive it. */
  rate: number
  /** The mark price recorded with it, NaN when the recording has none (the run then uses the bar's open). */
  mark_price: number
}

/**
 * A target position as a signed fraction of equity in [−1, 1] (1 all in long, −1 all in short, 0
 * flat), or NaN to keep the current one. Anything else fails the run with STRATEGY_INVALID_OUTPUT.
 */
export type Target = number

/**
 * A target with protective levels for the position it leaves: absolute prices, re-stated at any closed bar
 * (a stop moved to breakeven, a moving ATR stop). A key left out (or undefined) keeps that level, `null`
 * removes it. A stop triggers when the price falls to it (a long) or rises to it (a short), a take profit the
 * other way; a level already on the wrong side of this bar's close exits at the next bar's open. While set,
 * a level replaces the run's `exits` level of its side. Keys other than these three fail the run with
 * STRATEGY_INVALID_OUTPUT.
 */
export interface TargetWithLevels {
  /** As a plain Target: NaN keeps the current target (and the levels still apply). */
  target: Target
  /** A finite price > 0, or null to remove the stop. */
  stop_price?: number | null
  /** A finite price > 0, or null to remove the take profit. */
  take_profit_price?: number | null
}

/** What onBar answers, and what onStep answers per symbol: a target, or a target with protective levels. */
export type Answer = Target | TargetWithLevels

/** What create returns for a single-symbol module. */
export interface SingleSymbolStrategy {
  /** Called once per closed bar, in order; the target fills at the next bar's open, and the levels apply from then on. */
  onBar(bar: Bar): Answer
  onFunding?(event: FundingEvent): void
}

/** Targets (with levels or without) by symbol; a symbol left out keeps its current target and levels. */
export type Targets = Record<string, Answer>

/** What create returns for a multi-symbol module (`export const multi_symbol = true`). */
export interface MultiSymbolStrategy {
  /**
   * Called once per time step with the bar of each symbol that closed a bar at this step (a symbol with
   * no bar then is absent). Returning nothing keeps every target; Σ|targets| above 1 is scaled down.
   */
  onStep(bars: Record<string, Bar>): Targets | undefined | void
  onFunding?(event: FundingEvent): void
}

/** `export function validate(p)`: optional; undefined when the params are fine. */
export type Validate<P = Record<string, number | boolean>> = (params: P) => ParamProblem | undefined | void

/** `export function warmup(p)`: optional (0 without it); the closed bars read before the first target, a whole number from 0 to 5000. */
export type Warmup<P = Record<string, number | boolean>> = (params: P) => number

/** `export function create(p, ctx)`: the strategy object of the run. */
export type Create<P = Record<string, number | boolean>, S extends SingleSymbolStrategy | MultiSymbolStrategy = SingleSymbolStrategy> = (
  params: P,
  ctx: StrategyContext,
) => S

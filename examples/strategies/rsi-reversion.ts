// Mean reversion on Wilder's RSI, as a TypeScript user module: go long when RSI closes below `oversold`
// and close at `exit`; with allow_short, go short above `overbought` and cover at `exit`. Each entry
// states a protective stop `stop_loss` beyond its signal's close, moved to the entry price (breakeven)
// once a close is `breakeven` in favour. Types come from 'perpetua/strategy' through `import type`, which
// the upload strips with the other types.
import type { Answer, Bar, ParamProblem, ParamValues, SingleSymbolStrategy, StrategyContext, StrategyParams } from 'perpetua/strategy'

export const params = {
  period: { type: 'integer', default: 14, minimum: 2, maximum: 500, description: "Closes in Wilder's RSI" },
  oversold: { type: 'number', default: 30, minimum: 1, maximum: 98, description: 'Go long when RSI closes below this' },
  exit: { type: 'number', default: 50, minimum: 1, maximum: 99, description: 'Close a long at or above this, a short at or below it' },
  overbought: { type: 'number', default: 70, minimum: 2, maximum: 99, description: 'With allow_short, go short when RSI closes above this' },
  allow_short: { type: 'boolean', default: false, description: 'Also trade the overbought side' },
  stop_loss: { type: 'number', default: 0.04, minimum: 0, maximum: 0.5, description: "A stop this fraction beyond the entry signal's close; 0 for none" },
  breakeven: { type: 'number', default: 0.02, minimum: 0, maximum: 0.5, description: 'Move the stop to the entry price once a close is this fraction in favour; 0 never' },
} satisfies StrategyParams

type Params = ParamValues<typeof params>

export function validate(p: Params): ParamProblem | undefined {
  if (!(p.oversold < p.exit)) return { field: 'params.oversold', message: 'params.oversold must be less than params.exit' }
  if (!(p.exit < p.overbought)) return { field: 'params.overbought', message: 'params.overbought must be greater than params.exit' }
  return undefined
}

// RSI over `period` changes needs period + 1 closes: the bar at index `period` is the first with a value.
export function warmup(p: Params): number {
  return p.period
}

/** Wilder's RSI: the first average is the plain mean of `period` changes, then each new change is smoothed in with weight 1/period. */
class WilderRsi {
  private previous = NaN
  private changes = 0
  private gain = 0
  private loss = 0

  constructor(private readonly period: number) {}

  /** The RSI after this close, NaN until `period` changes have been seen. */
  push(close: number): number {
    const previous = this.previous
    this.previous = close
    if (previous !== previous) return NaN
    const change = close - previous
    const up = change > 0 ? change : 0
    const down = change < 0 ? -change : 0
    const n = this.period
    this.changes++
    if (this.changes <= n) {
      this.gain += up / n
      this.loss += down / n
      if (this.changes < n) return NaN
    } else {
      this.gain = (this.gain * (n - 1) + up) / n
      this.loss = (this.loss * (n - 1) + down) / n
    }
    if (this.loss === 0) return this.gain === 0 ? 50 : 100
    return 100 - 100 / (1 + this.gain / this.loss)
  }
}

export function create(p: Params, _ctx: StrategyContext): SingleSymbolStrategy {
  const rsi = new WilderRsi(p.period)
  // The position this module last asked for: 1 long, -1 short, 0 flat.
  let side = 0
  // A target stated at a close fills at the next bar's open: that open is the entry price.
  let filling = false
  let entry = NaN
  // The stop has been moved to the entry price for this position.
  let atBreakeven = false
  return {
    onBar(bar: Bar): Answer {
      if (filling) {
        filling = false
        entry = bar.open
        atBreakeven = false
      }
      const r = rsi.push(bar.close)
      if (r !== r) return NaN
      let next = side
      if (side === 0) {
        if (r < p.oversold) next = 1
        else if (p.allow_short && r > p.overbought) next = -1
      } else if (side > 0) {
        if (r >= p.exit) next = p.allow_short && r > p.overbought ? -1 : 0
      } else if (r <= p.exit) {
        next = r < p.oversold ? 1 : 0
      }
      if (next !== side) {
        side = next
        filling = next !== 0
        // A long's stop below the close, a short's above it; the engine rounds it to the tick, away from the price.
        return next !== 0 && p.stop_loss > 0 ? { target: next, stop_price: bar.close * (1 - next * p.stop_loss) } : next
      }
      // The module is not told of a protective exit: after one, this restates a level for a flat position,
      // which the engine ignores, and the next target other than `side` releases the latch.
      if (side !== 0 && !atBreakeven && p.breakeven > 0 && entry === entry && (bar.close - entry) * side >= entry * p.breakeven) {
        atBreakeven = true
        return { target: NaN, stop_price: entry }
      }
      return NaN
    },
  }
}

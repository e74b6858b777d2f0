import { Type } from 'typebox'
import type { BarSeries } from '../engine/types.js'
import { integer, MULTI_SYMBOL_MIN_CAPITAL } from './params.js'
import type { MultiSymbolSignal, MultiSymbolTemplate } from './types.js'

const schema = Type.Object(
  {
    lookback: integer(1, 1000, 20, 'Bars over which each symbol’s return is measured'),
    rebalance_every: integer(1, 1000, 5, 'Bars between rebalances'),
    long_count: integer(0, 49, 1, 'Symbols with the highest return held long'),
    short_count: integer(0, 49, 0, 'Symbols with the lowest return held short'),
  },
  { additionalProperties: false },
)

/** Ranks symbols by trailing return; holds the best long and the worst short in equal parts of equity. */
export const crossSectionalMomentum: MultiSymbolTemplate<typeof schema> = {
  id: 'cross_sectional_momentum',
  description:
    'Cross-sectional momentum over several symbols. Every rebalance_every bars it ranks the symbols by their return over ' +
    'the last lookback bars, holds the top long_count long and the bottom short_count short, each with an equal share ' +
    '1 / (long_count + short_count) of equity, and closes the rest. The first rebalance comes once enough symbols have ' +
    'lookback bars of history.',
  schema,
  minCapital: MULTI_SYMBOL_MIN_CAPITAL,
  // A symbol is ranked once it has a bar lookback bars back.
  warmupBars: (p) => p.lookback,
  multiSymbol: true,
  minSymbols: 2,
  refine: (p) =>
    p.long_count + p.short_count >= 1
      ? undefined
      : { field: 'params.long_count', message: 'params.long_count + params.short_count must be at least 1' },
  create: (context, p) => new MomentumSignal(context.bars, p.lookback, p.rebalance_every, p.long_count, p.short_count),
}

class MomentumSignal implements MultiSymbolSignal {
  private readonly scores: Float64Array
  private readonly order: number[]
  private sinceRebalance = 0
  private started = false

  constructor(
    private readonly bars: readonly BarSeries[],
    private readonly lookback: number,
    private readonly every: number,
    private readonly longs: number,
    private readonly shorts: number,
  ) {
    this.scores = new Float64Array(bars.length)
    this.order = []
  }

  onStep(at: Int32Array, targets: Float64Array): boolean {
    this.sinceRebalance++
    if (this.started && this.sinceRebalance < this.every) return false
    const order = this.order
    order.length = 0
    for (let s = 0; s < this.bars.length; s++) {
      const i = at[s]!
      if (i < this.lookback) continue
      const close = this.bars[s]!.close
      this.scores[s] = close[i]! / close[i - this.lookback]! - 1
      order.push(s)
    }
    if (order.length < this.longs + this.shorts) return false
    // Highest return first; ties by symbol order, so the ranking never depends on sort stability.
    order.sort((a, b) => this.scores[b]! - this.scores[a]! || a - b)
    const weight = 1 / (this.longs + this.shorts)
    for (let s = 0; s < this.bars.length; s++) targets[s] = 0
    for (let k = 0; k < this.longs; k++) targets[order[k]!] = weight
    for (let k = 0; k < this.shorts; k++) targets[order[order.length - 1 - k]!] = -weight
    this.started = true
    this.sinceRebalance = 0
    return true
  }
}

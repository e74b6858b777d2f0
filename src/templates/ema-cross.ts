import { Type } from 'typebox'
import type { BarSeries } from '../engine/types.js'
import { CrossDetector } from './indicators/cross.js'
import { Ema } from './indicators/ema.js'
import { ALLOW_SHORT_DESCRIPTION, SINGLE_SYMBOL_MIN_CAPITAL, flag, integer } from './params.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from './types.js'

const schema = Type.Object(
  {
    fast: integer(2, 999, 12, 'Period of the fast EMA'),
    slow: integer(3, 1000, 26, 'Period of the slow EMA; greater than fast'),
    allow_short: flag(false, ALLOW_SHORT_DESCRIPTION),
  },
  { additionalProperties: false },
)

/** sma_cross with exponential averages (each seeded with its simple average). */
export const emaCross: SingleSymbolTemplate<typeof schema> = {
  id: 'ema_cross',
  description:
    'Exponential moving average crossover (α = 2 / (period + 1), seeded with the simple average of the first period closes). ' +
    'Same cross rule and positions as sma_cross.',
  schema,
  minCapital: SINGLE_SYMBOL_MIN_CAPITAL,
  // The slow EMA exists from bar slow − 1 on; that first difference has no predecessor, so no cross.
  warmupBars: (p) => p.slow,
  multiSymbol: false,
  refine: (p) => (p.fast < p.slow ? undefined : { field: 'params.fast', message: 'params.fast must be less than params.slow' }),
  create: (context, p) => new EmaCrossSignal(context.bars[0]!, p.fast, p.slow, p.allow_short ? -1 : 0),
}

class EmaCrossSignal implements SingleSymbolSignal {
  private readonly fast: Ema
  private readonly slow: Ema
  private readonly cross = new CrossDetector()

  constructor(
    private readonly series: BarSeries,
    fast: number,
    slow: number,
    private readonly onCrossDown: number,
  ) {
    this.fast = new Ema(fast)
    this.slow = new Ema(slow)
  }

  onBar(i: number): number {
    const close = this.series.close[i]!
    const fast = this.fast.push(close)
    const slow = this.slow.push(close)
    if (slow !== slow) return Number.NaN
    const crossed = this.cross.update(Math.sign(fast - slow))
    return crossed > 0 ? 1 : crossed < 0 ? this.onCrossDown : Number.NaN
  }
}

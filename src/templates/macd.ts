import { Type } from 'typebox'
import type { BarSeries } from '../engine/types.js'
import { CrossDetector } from './indicators/cross.js'
import { Macd } from './indicators/macd.js'
import { ALLOW_SHORT_DESCRIPTION, SINGLE_SYMBOL_MIN_CAPITAL, flag, integer } from './params.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from './types.js'

const schema = Type.Object(
  {
    fast: integer(2, 499, 12, 'Period of the fast EMA of the MACD line'),
    slow: integer(3, 500, 26, 'Period of the slow EMA of the MACD line; greater than fast'),
    signal: integer(2, 200, 9, 'Period of the signal EMA of the MACD line'),
    allow_short: flag(false, ALLOW_SHORT_DESCRIPTION),
  },
  { additionalProperties: false },
)

/** Long when the MACD line crosses above its signal line; closes (or reverses) when it crosses below. */
export const macd: SingleSymbolTemplate<typeof schema> = {
  id: 'macd',
  description:
    'MACD 12/26/9 by default: line = EMA(fast) − EMA(slow), signal = EMA(signal) of the line. Goes long when the line ' +
    'crosses above the signal (histogram turns positive after a negative value, zeros skipped), closes or reverses ' +
    'into a short when it crosses below.',
  schema,
  minCapital: SINGLE_SYMBOL_MIN_CAPITAL,
  // The histogram exists from bar slow + signal − 2 on (indicators/macd.ts); a cross needs one before it.
  warmupBars: (p) => p.slow + p.signal - 1,
  multiSymbol: false,
  refine: (p) => (p.fast < p.slow ? undefined : { field: 'params.fast', message: 'params.fast must be less than params.slow' }),
  create: (context, p) => new MacdSignal(context.bars[0]!, new Macd(p.fast, p.slow, p.signal), p.allow_short ? -1 : 0),
}

class MacdSignal implements SingleSymbolSignal {
  private readonly cross = new CrossDetector()

  constructor(
    private readonly series: BarSeries,
    private readonly indicator: Macd,
    private readonly onCrossDown: number,
  ) {}

  onBar(i: number): number {
    const histogram = this.indicator.push(this.series.close[i]!)
    if (histogram !== histogram) return Number.NaN
    const crossed = this.cross.update(Math.sign(histogram))
    return crossed > 0 ? 1 : crossed < 0 ? this.onCrossDown : Number.NaN
  }
}

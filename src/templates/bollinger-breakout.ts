import { Type } from 'typebox'
import type { BarSeries } from '../engine/types.js'
import { Bollinger } from './indicators/bollinger.js'
import { SINGLE_SYMBOL_MIN_CAPITAL, decimal, flag, integer } from './params.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from './types.js'

const schema = Type.Object(
  {
    period: integer(2, 500, 20, 'Closes in the middle band (simple average) and the standard deviation'),
    width: decimal(0.1, 10, 2, 'Band distance from the middle, in population standard deviations'),
    allow_short: flag(false, 'Also short a close below the lower band'),
  },
  { additionalProperties: false },
)

/** Volatility breakout: long a close above the upper band, out when the close falls back below the middle. */
export const bollingerBreakout: SingleSymbolTemplate<typeof schema> = {
  id: 'bollinger_breakout',
  description:
    'Bollinger band breakout (middle = SMA(period), bands = middle ± width × population standard deviation). Flat: long ' +
    'when the close is above the upper band; with allow_short, short when below the lower band. A long closes when the ' +
    'close falls below the middle band (reversing into a short if it is also below the lower band and allow_short); a ' +
    'short mirrors that.',
  schema,
  minCapital: SINGLE_SYMBOL_MIN_CAPITAL,
  // The bands exist from bar period − 1 on and may signal there.
  warmupBars: (p) => p.period - 1,
  multiSymbol: false,
  create: (context, p) => new BollingerSignal(context.bars[0]!, new Bollinger(p.period, p.width), p.allow_short),
}

class BollingerSignal implements SingleSymbolSignal {
  private state = 0

  constructor(
    private readonly series: BarSeries,
    private readonly bands: Bollinger,
    private readonly shorts: boolean,
  ) {}

  onBar(i: number): number {
    const close = this.series.close[i]!
    const bands = this.bands
    if (!bands.push(close)) return Number.NaN
    let next = this.state
    if (this.state === 0) {
      if (close > bands.upper) next = 1
      else if (this.shorts && close < bands.lower) next = -1
    } else if (this.state > 0) {
      if (close < bands.middle) next = this.shorts && close < bands.lower ? -1 : 0
    } else if (close > bands.middle) {
      next = close > bands.upper ? 1 : 0
    }
    if (next === this.state) return Number.NaN
    this.state = next
    return next
  }
}

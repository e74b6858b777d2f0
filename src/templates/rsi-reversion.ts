import { Type } from 'typebox'
import type { BarSeries } from '../engine/types.js'
import { WilderRsi } from './indicators/rsi.js'
import { SINGLE_SYMBOL_MIN_CAPITAL, flag, integer } from './params.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from './types.js'

const schema = Type.Object(
  {
    period: integer(2, 500, 14, "Closes in Wilder's RSI"),
    oversold: integer(1, 98, 30, 'Go long when RSI closes below this level'),
    overbought: integer(2, 99, 70, 'With allow_short, go short when RSI closes above this level'),
    exit: integer(1, 99, 50, 'Close a long when RSI closes at or above this level (a short at or below it)'),
    allow_short: flag(false, 'Also short when RSI closes above overbought'),
  },
  { additionalProperties: false },
)

/** Mean reversion on Wilder's RSI: buy oversold, exit at the middle level; short overbought with allow_short. */
export const rsiReversion: SingleSymbolTemplate<typeof schema> = {
  id: 'rsi_reversion',
  description:
    "Mean reversion on Wilder's RSI. Flat: long when RSI < oversold; with allow_short, short when RSI > overbought. " +
    'A long closes when RSI ≥ exit (reversing into a short if RSI > overbought and allow_short); a short closes when ' +
    'RSI ≤ exit (reversing into a long if RSI < oversold).',
  schema,
  minCapital: SINGLE_SYMBOL_MIN_CAPITAL,
  // RSI needs period changes, so period + 1 closes: bar period is the first that may signal.
  warmupBars: (p) => p.period,
  multiSymbol: false,
  refine: (p) => {
    if (!(p.oversold < p.exit)) return { field: 'params.oversold', message: 'params.oversold must be less than params.exit' }
    if (!(p.exit < p.overbought)) return { field: 'params.overbought', message: 'params.overbought must be greater than params.exit' }
    return undefined
  },
  create: (context, p) => new RsiReversionSignal(context.bars[0]!, p),
}

class RsiReversionSignal implements SingleSymbolSignal {
  private readonly rsi: WilderRsi
  private state = 0

  constructor(
    private readonly series: BarSeries,
    private readonly p: { period: number; oversold: number; overbought: number; exit: number; allow_short: boolean },
  ) {
    this.rsi = new WilderRsi(p.period)
  }

  onBar(i: number): number {
    const r = this.rsi.push(this.series.close[i]!)
    if (r !== r) return Number.NaN
    const { oversold, overbought, exit, allow_short: shorts } = this.p
    let next = this.state
    if (this.state === 0) {
      if (r < oversold) next = 1
      else if (shorts && r > overbought) next = -1
    } else if (this.state > 0) {
      if (r >= exit) next = shorts && r > overbought ? -1 : 0
    } else if (r <= exit) {
      next = r < oversold ? 1 : 0
    }
    if (next === this.state) return Number.NaN
    this.state = next
    return next
  }
}

import { Type } from 'typebox'
import type { BarSeries } from '../engine/types.js'
import { CrossDetector } from './indicators/cross.js'
import { SmaPair } from './indicators/sma-pair.js'
import { ALLOW_SHORT_DESCRIPTION, SINGLE_SYMBOL_MIN_CAPITAL, flag, integer } from './params.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from './types.js'

const schema = Type.Object(
  {
    fast: integer(2, 999, 10, 'Closes in the fast simple moving average'),
    slow: integer(3, 1000, 30, 'Closes in the slow simple moving average; greater than fast'),
    allow_short: flag(false, ALLOW_SHORT_DESCRIPTION),
  },
  { additionalProperties: false },
)

/** Long on a cross up of SMA(fast) over SMA(slow); closes (or reverses with allow_short) on a cross down. */
export const smaCross: SingleSymbolTemplate<typeof schema> = {
  id: 'sma_cross',
  description:
    'Simple moving average crossover. A cross up is the first bar with SMA(fast) − SMA(slow) > 0 whose previous nonzero ' +
    'difference was < 0 (a cross down mirrored). Goes all-in long on a cross up; on a cross down closes, or reverses ' +
    'into a short when allow_short is set.',
  schema,
  minCapital: SINGLE_SYMBOL_MIN_CAPITAL,
  // Both averages exist from bar slow − 1 on; that first difference has no predecessor, so no cross.
  warmupBars: (p) => p.slow,
  multiSymbol: false,
  refine: (p) => (p.fast < p.slow ? undefined : { field: 'params.fast', message: 'params.fast must be less than params.slow' }),
  create: (context, p) => new SmaCrossSignal(context.bars[0]!, p.fast, p.slow, p.allow_short ? -1 : 0),
}

class SmaCrossSignal implements SingleSymbolSignal {
  private readonly averages: SmaPair
  private readonly cross = new CrossDetector()
  private readonly one = new Float64Array(1)

  constructor(
    private readonly series: BarSeries,
    fast: number,
    slow: number,
    private readonly onCrossDown: number,
  ) {
    this.averages = new SmaPair(fast, slow)
  }

  onBar(i: number): number {
    this.onBars(i, i + 1, this.one)
    return this.one[0]!
  }

  onBars(from: number, to: number, targets: Float64Array): void {
    this.averages.pushAll(this.series.close, from, to, targets)
    this.cross.updateAll(targets, to - from, 1, this.onCrossDown)
  }
}

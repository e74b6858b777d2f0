import { Type } from 'typebox'
import type { BarSeries } from '../engine/types.js'
import { RollingExtreme } from './indicators/rolling-extreme.js'
import { SINGLE_SYMBOL_MIN_CAPITAL, flag, integer } from './params.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from './types.js'

const schema = Type.Object(
  {
    entry_period: integer(2, 1000, 20, 'Enter when the close breaks the highest high (lowest low) of this many previous bars'),
    exit_period: integer(1, 1000, 10, 'Exit when the close breaks the lowest low (highest high) of this many previous bars'),
    allow_short: flag(false, 'Also short a close below the entry channel'),
  },
  { additionalProperties: false },
)

/** Channel breakout in the turtle style: enter on a new entry_period extreme, exit on an exit_period one. */
export const donchianBreakout: SingleSymbolTemplate<typeof schema> = {
  id: 'donchian_breakout',
  description:
    'Donchian channel breakout. Channels are the highest high and lowest low of the previous N bars (the current bar ' +
    'excluded). Flat: long when the close is above the entry_period high; with allow_short, short when below the ' +
    'entry_period low. A long closes when the close is below the exit_period low (reversing into a short when it is ' +
    'also below the entry_period low and allow_short); a short mirrors that.',
  schema,
  minCapital: SINGLE_SYMBOL_MIN_CAPITAL,
  // The entry channel of the previous entry_period bars exists from bar entry_period on.
  warmupBars: (p) => p.entry_period,
  multiSymbol: false,
  create: (context, p) => new DonchianSignal(context.bars[0]!, p.entry_period, p.exit_period, p.allow_short),
}

class DonchianSignal implements SingleSymbolSignal {
  private readonly entryHigh: RollingExtreme
  private readonly entryLow: RollingExtreme
  private readonly exitHigh: RollingExtreme
  private readonly exitLow: RollingExtreme
  private state = 0

  constructor(
    private readonly series: BarSeries,
    entry: number,
    exit: number,
    private readonly shorts: boolean,
  ) {
    this.entryHigh = new RollingExtreme(entry, 'max')
    this.entryLow = new RollingExtreme(entry, 'min')
    this.exitHigh = new RollingExtreme(exit, 'max')
    this.exitLow = new RollingExtreme(exit, 'min')
  }

  onBar(i: number): number {
    const { close, high, low } = this.series
    const c = close[i]!
    // Channels of the previous bars, read before this bar joins them.
    const upper = this.entryHigh.value
    const lower = this.entryLow.value
    const exitUpper = this.exitHigh.value
    const exitLower = this.exitLow.value
    this.entryHigh.push(high[i]!)
    this.entryLow.push(low[i]!)
    this.exitHigh.push(high[i]!)
    this.exitLow.push(low[i]!)
    let next = this.state
    if (this.state === 0) {
      if (c > upper) next = 1
      else if (this.shorts && c < lower) next = -1
    } else if (this.state > 0) {
      if (c < exitLower) next = this.shorts && c < lower ? -1 : 0
    } else if (c > exitUpper) {
      next = c > upper ? 1 : 0
    }
    if (next === this.state) return Number.NaN
    this.state = next
    return next
  }
}

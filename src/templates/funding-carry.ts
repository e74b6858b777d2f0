import { Type } from 'typebox'
import type { BarSeries, FundingSeries } from '../engine/types.js'
import { SINGLE_SYMBOL_MIN_CAPITAL, decimal, flag, integer } from './params.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from './types.js'

const schema = Type.Object(
  {
    lookback_events: integer(1, 90, 3, 'Funding events averaged (Binance settles every 8 h on most symbols)'),
    entry_rate: decimal(0.000001, 0.01, 0.0003, 'Short when the average funding rate per event is at least this (0.0003 = 0.03 %)'),
    exit_rate: decimal(0, 0.01, 0.0001, 'Close the short when the average falls below this; less than entry_rate'),
    allow_long: flag(true, 'Mirror image: long when the average is at most −entry_rate, close above −exit_rate'),
  },
  { additionalProperties: false },
)

/** Binance settles funding every 8 h on most symbols (BTCUSDT since 2019); the warm-up assumes that spacing. */
const FUNDING_INTERVAL_MS = 8 * 3_600_000

/** Collects funding: holds the side that receives it while the recent average rate is large. */
export const fundingCarry: SingleSymbolTemplate<typeof schema> = {
  id: 'funding_carry',
  description:
    'Funding-rate carry on the perpetual. At each close it averages the last lookback_events funding rates settled so ' +
    'far; when a new event arrives it goes short if the average ≥ entry_rate (shorts receive positive funding) and ' +
    'closes once it is < exit_rate; with allow_long, goes long when the average ≤ −entry_rate and closes once it is ' +
    '> −exit_rate. Needs the symbol’s funding history.',
  schema,
  minCapital: SINGLE_SYMBOL_MIN_CAPITAL,
  // lookback_events events 8 h apart span (lookback_events − 1) × 8 h, so bar i sees them all only once (i + 1) × interval exceeds that.
  warmupBars: (p, intervalMs) => Math.floor(((p.lookback_events - 1) * FUNDING_INTERVAL_MS) / intervalMs),
  multiSymbol: false,
  refine: (p) =>
    p.exit_rate < p.entry_rate ? undefined : { field: 'params.exit_rate', message: 'params.exit_rate must be less than params.entry_rate' },
  create: (context, p) => new FundingCarrySignal(context.bars[0]!, context.funding[0]!, p),
}

class FundingCarrySignal implements SingleSymbolSignal {
  private readonly rates: Float64Array
  private next = 0
  private seen = 0
  private state = 0

  constructor(
    private readonly series: BarSeries,
    private readonly funding: FundingSeries,
    private readonly p: { lookback_events: number; entry_rate: number; exit_rate: number; allow_long: boolean },
  ) {
    this.rates = new Float64Array(p.lookback_events)
  }

  onBar(i: number): number {
    const closeTime = this.series.openTime[i]! + this.series.intervalMs
    const { time, rate } = this.funding
    let fresh = false
    while (this.next < time.length && time[this.next]! < closeTime) {
      this.rates[this.seen % this.rates.length] = rate[this.next]!
      this.seen++
      this.next++
      fresh = true
    }
    if (!fresh || this.seen < this.rates.length) return Number.NaN
    let sum = 0
    for (const r of this.rates) sum += r
    const average = sum / this.rates.length
    const { entry_rate: entry, exit_rate: exit, allow_long: longs } = this.p
    let next = this.state
    if (this.state === 0) {
      if (average >= entry) next = -1
      else if (longs && average <= -entry) next = 1
    } else if (this.state < 0) {
      if (average < exit) next = longs && average <= -entry ? 1 : 0
    } else if (average > -exit) {
      next = average >= entry ? -1 : 0
    }
    if (next === this.state) return Number.NaN
    this.state = next
    return next
  }
}

import type { BarSeries, FundingSeries } from './types.js'

/** One closed bar, as a run receives it. */
export interface BarInput {
  openTime: number
  open: number
  high: number
  low: number
  close: number
  volume: number
  /** Quote-asset volume and number of trades (klines fields 7 and 8); NaN to a strategy when absent. */
  quoteVolume?: number
  trades?: number
}

/** One funding event; markPrice NaN when the exchange recorded none. */
export interface FundingInput {
  time: number
  rate: number
  markPrice: number
}

/**
 * A bar series and its funding events that grow one closed bar at a time: a run's (the paper broker's,
 * and a custom module's sandbox). The arrays are over-allocated and swapped as they grow, so readers go
 * through the series objects on every call; unfilled funding slots hold Infinity, so a reader that
 * stops at the arrays' length never sees them as due.
 */
export class GrowingSeries {
  readonly bars: Required<BarSeries>
  readonly funding: FundingSeries
  length = 0
  fundingLength = 0

  constructor(symbol: string, intervalMs: number) {
    const empty = () => new Float64Array(64)
    this.bars = { symbol, intervalMs, openTime: empty(), open: empty(), high: empty(), low: empty(), close: empty(), volume: empty(), quoteVolume: empty(), trades: empty() }
    this.funding = { time: new Float64Array(0), rate: new Float64Array(0), markPrice: new Float64Array(0) }
  }

  /** Appends a bar after the last one; its index. */
  append(bar: BarInput): number {
    const s = this.bars
    const i = this.length
    if (i > 0 && !(bar.openTime > s.openTime[i - 1]!)) throw new RangeError(`${s.symbol}: bar ${bar.openTime} is not after ${s.openTime[i - 1]}`)
    if (i === s.openTime.length) for (const key of ['openTime', 'open', 'high', 'low', 'close', 'volume', 'quoteVolume', 'trades'] as const) s[key] = grow(s[key], i)
    s.openTime[i] = bar.openTime
    s.open[i] = bar.open
    s.high[i] = bar.high
    s.low[i] = bar.low
    s.close[i] = bar.close
    s.volume[i] = bar.volume
    s.quoteVolume[i] = bar.quoteVolume ?? Number.NaN
    s.trades[i] = bar.trades ?? Number.NaN
    this.length = i + 1
    return i
  }

  /** Adds the events later than the last one held and than `after` (overlapping reads repeat events). */
  addFunding(events: readonly FundingInput[], after = -Infinity): void {
    const f = this.funding
    for (const event of events) {
      const n = this.fundingLength
      const last = n > 0 ? f.time[n - 1]! : -Infinity
      if (!(event.time > last) || !(event.time > after)) continue
      if (n === f.time.length) for (const key of ['time', 'rate', 'markPrice'] as const) f[key] = grow(f[key], n)
      f.time[n] = event.time
      f.rate[n] = event.rate
      f.markPrice[n] = event.markPrice
      this.fundingLength = n + 1
    }
    for (let k = this.fundingLength; k < f.time.length; k++) f.time[k] = Infinity
  }
}

function grow(a: Float64Array, used: number): Float64Array {
  const next = new Float64Array(Math.max(64, a.length * 2))
  next.set(a.subarray(0, used))
  return next
}

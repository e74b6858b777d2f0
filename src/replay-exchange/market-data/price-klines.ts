import { aggregatesFrom, type Interval } from '../common/intervals.js'
import { type KlineQuery, type KlineRow, klines } from './klines.js'
import type { MarketSymbol, SourceRef } from './market-symbol.js'
import { firstAtOrAfter } from './recorded/bars.js'
import { markPrice, premiumOf } from './premium.js'

/**
 * Mark-price, index-price and premium-index klines: the buckets of the trade klines (same
 * intervals, times, limits and open bucket), with each bar's open and close the derived mark,
 * index or premium at the bar's first and last millisecond (or replay now). Mark and index highs
 * and lows widen the trade bar's range to take in their open and close; the premium only changes
 * with the funding period, so its high and low are its open and close. A symbol with recorded
 * mark-price klines (data/…-markPrice-1h-…) serves those instead for every closed bucket they cover
 * completely: real marks, which the exits of `trigger: "mark"` backtests are judged on.
 */

export type PriceKind = 'mark' | 'index' | 'premium'

const ZERO = '0'

export function priceKlines(symbol: MarketSymbol, kind: PriceKind, query: KlineQuery, now: number): KlineRow[] {
  const rows: KlineRow[] = []
  const recorded = kind === 'mark' ? markSourceFor(symbol, query.interval) : undefined
  for (const row of klines(symbol, query, now)) {
    const start = row[0]
    const closeTime = row[6]
    const end = Math.min(closeTime, now)
    const real = recorded && closeTime < now ? recordedBucket(recorded, start, closeTime + 1) : undefined
    if (real) {
      const samples = Math.ceil((closeTime + 1 - start) / 1000)
      rows.push([start, real.open.toFixed(8), real.high.toFixed(8), real.low.toFixed(8), real.close.toFixed(8), ZERO, closeTime, ZERO, samples, ZERO, ZERO, ZERO])
      continue
    }
    const first = markPrice(symbol, start)
    const last = markPrice(symbol, end)
    if (!first || !last) continue
    let open: number
    let close: number
    let high: number
    let low: number
    if (kind === 'premium') {
      open = premiumOf(first.fundingRate)
      close = premiumOf(last.fundingRate)
      high = Math.max(open, close)
      low = Math.min(open, close)
    } else {
      const toIndex = kind === 'index' ? 1 / (1 + premiumOf(first.fundingRate)) : 1
      open = kind === 'index' ? first.index : first.mark
      close = kind === 'index' ? last.index : last.mark
      high = Math.max(open, close, Number(row[2]) * toIndex)
      low = Math.min(open, close, Number(row[3]) * toIndex)
    }
    // Binance's "ignore" count: the mark and index are sampled each second, the premium every 5 s
    // (its examples show 60 and 12 for a minute).
    const seconds = Math.ceil((end + 1 - start) / 1000)
    const samples = kind === 'premium' ? Math.ceil(seconds / 5) : seconds
    rows.push([start, open.toFixed(8), high.toFixed(8), low.toFixed(8), close.toFixed(8), ZERO, closeTime, ZERO, samples, ZERO, ZERO, ZERO])
  }
  return rows
}

/** The recorded mark series an interval aggregates from exactly (the finest such), if any. */
function markSourceFor(symbol: MarketSymbol, interval: Interval): SourceRef | undefined {
  return symbol.markSources.find((ref) => aggregatesFrom(interval, ref.interval))
}

/** The recorded bars of [start, end) aggregated, when every one of them is recorded; else undefined. */
function recordedBucket(ref: SourceRef, start: number, end: number): { open: number; high: number; low: number; close: number } | undefined {
  if (start < ref.from || end > ref.to) return undefined
  const bars = ref.bars()
  let i = firstAtOrAfter(bars, start)
  if (i >= bars.length || bars.time(i) !== start) return undefined
  const open = bars.open(i)
  let high = bars.high(i)
  let low = bars.low(i)
  let close = bars.close(i)
  let expected = start + bars.step
  for (i++; i < bars.length && bars.time(i) < end; i++, expected += bars.step) {
    if (bars.time(i) !== expected) return undefined
    high = Math.max(high, bars.high(i))
    low = Math.min(low, bars.low(i))
    close = bars.close(i)
  }
  return expected === end ? { open, high, low, close } : undefined
}

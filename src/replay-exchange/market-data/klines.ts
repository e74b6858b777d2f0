import { type Bars, endTime, firstAtOrAfter, firstTime } from './recorded/bars.js'
import { decimal } from './format.js'
import { aggregatesFrom, bucketStart, type Interval, nextBucket, nominalMs } from '../common/intervals.js'
import type { MarketSymbol, SourceRef } from './market-symbol.js'
import { quoteVolume, takerBuyShare } from './path.js'
import { rangeStats, type RangeStats } from './prices.js'
import { lastTrade, tradesBefore } from './trades.js'

/** A kline row exactly as /fapi/v1/klines sends it. */
export type KlineRow = [number, string, string, string, string, string, number, string, number, string, string, string]

export interface KlineQuery {
  interval: Interval
  startTime: number | undefined
  endTime: number | undefined
  limit: number
}

/**
 * The series an interval is served from: one that the interval aggregates exactly (15m from 1m,
 * 4h from 1h, 1w from 1h or 1d), the widest-spanning such series, the coarser of two alike.
 */
export function sourceFor(symbol: MarketSymbol, interval: Interval): SourceRef | undefined {
  let best: SourceRef | undefined
  for (const ref of symbol.sources) {
    if (!aggregatesFrom(interval, ref.interval)) continue
    if (!best || ref.to - ref.from >= best.to - best.from) best = ref
  }
  return best
}

/**
 * Klines of recorded (or aggregated) bars at their own timestamps: complete buckets only, plus the
 * bucket open at replay `now`, built from the finer data up to now with the latest trade's price as
 * its close. Nothing after `now` is ever returned.
 */
export function klines(symbol: MarketSymbol, query: KlineQuery, now: number): KlineRow[] {
  const ref = sourceFor(symbol, query.interval)
  if (!ref) return []
  const bars = ref.bars()
  if (bars.length === 0) return []
  const to = Math.min(query.endTime ?? now, now)
  if (query.startTime !== undefined) return collect(symbol, bars, query.interval, query.startTime, to, query.limit, now)
  // Newest first: widen the window back from `to` until it holds `limit` buckets or reaches the data's start.
  let span = query.limit * nominalMs(query.interval)
  for (;;) {
    const from = to - span
    const rows = collect(symbol, bars, query.interval, from, to, Number.POSITIVE_INFINITY, now)
    if (rows.length >= query.limit || from <= firstTime(bars)) return rows.slice(-query.limit)
    span *= 2
  }
}

function collect(symbol: MarketSymbol, bars: Bars, interval: Interval, from: number, to: number, limit: number, now: number): KlineRow[] {
  const rows: KlineRow[] = []
  let i = firstAtOrAfter(bars, bucketStart(interval, from))
  while (i < bars.length && rows.length < limit) {
    const start = bucketStart(interval, bars.time(i))
    const end = nextBucket(interval, start)
    if (start > to || end > now) break
    let expected = start
    let stats: RangeStats | undefined
    for (; i < bars.length && bars.time(i) < end; i++) {
      if (bars.time(i) !== expected) expected = Number.NaN // a gap: the bucket is incomplete
      else expected += bars.step
      stats = accumulate(stats, bars, i, symbol.pathSeed)
    }
    if (stats && expected === end && start >= from) rows.push(row(symbol, start, end, stats, tradesBefore(symbol, end) - tradesBefore(symbol, start)))
  }
  const openStart = bucketStart(interval, now)
  if (rows.length < limit && openStart >= from && openStart <= to && openStart >= firstTime(bars) && endTime(bars) > now) {
    const open = openBucket(symbol, openStart, now)
    if (open) rows.push(row(symbol, openStart, nextBucket(interval, openStart), open, tradesBefore(symbol, now + 1) - tradesBefore(symbol, openStart)))
  }
  return rows
}

function accumulate(stats: RangeStats | undefined, bars: Bars, i: number, seed: number): RangeStats {
  const volume = bars.volume(i)
  const quote = quoteVolume(bars, i)
  const share = takerBuyShare(bars, i, seed)
  if (!stats) {
    return {
      open: bars.open(i),
      high: bars.high(i),
      low: bars.low(i),
      close: bars.close(i),
      volume,
      quoteVolume: quote,
      takerBuyVolume: volume * share,
      takerBuyQuoteVolume: quote * share,
    }
  }
  stats.high = Math.max(stats.high, bars.high(i))
  stats.low = Math.min(stats.low, bars.low(i))
  stats.close = bars.close(i)
  stats.volume += volume
  stats.quoteVolume += quote
  stats.takerBuyVolume += volume * share
  stats.takerBuyQuoteVolume += quote * share
  return stats
}

/** The bucket still open at `now`: the path up to now, closing at the latest trade's price. */
export function openBucket(symbol: MarketSymbol, start: number, now: number): RangeStats | undefined {
  const stats = rangeStats(symbol, start, now + 1)
  if (!stats) return undefined
  const trade = lastTrade(symbol, now)
  const tick = symbol.info.tickSize
  const onTick = (p: number) => Math.round(p / tick) * tick
  const close = trade && trade.time >= start ? trade.price : onTick(stats.close)
  return {
    ...stats,
    open: onTick(stats.open),
    close,
    high: Math.max(onTick(stats.high), close),
    low: Math.min(onTick(stats.low), close),
  }
}

function row(symbol: MarketSymbol, start: number, end: number, s: RangeStats, trades: number): KlineRow {
  const p = symbol.info.pricePrecision
  const q = symbol.info.quantityPrecision
  return [
    start,
    decimal(s.open, p),
    decimal(s.high, p),
    decimal(s.low, p),
    decimal(s.close, p),
    s.volume.toFixed(q),
    end - 1,
    s.quoteVolume.toFixed(4),
    trades,
    s.takerBuyVolume.toFixed(q),
    s.takerBuyQuoteVolume.toFixed(4),
    '0',
  ]
}

import { type Bars, barContaining, endTime, firstAtOrAfter, firstTime } from './recorded/bars.js'
import type { MarketSymbol, SourceRef } from './market-symbol.js'
import { knots, priceOnPath, quoteVolume, rangeOnPath, takerBuyShare } from './path.js'

/**
 * Prices of a symbol at any replay time, read from the finest recorded series that covers it (BTC
 * minutes where recorded, else hours, else days), along the derived intra-bar path.
 */

/** The loaded series with the smallest interval whose data covers [from, to]; undefined when none does. */
export function finestCovering(symbol: MarketSymbol, from: number, to: number): Bars | undefined {
  for (const ref of symbol.sources) {
    if (ref.from > from || ref.to < to) continue
    const bars = ref.bars()
    if (firstTime(bars) <= from && endTime(bars) >= to) return bars
  }
  return undefined
}

/** The path price at `time`; the last recorded close after the data ends; undefined before it starts. */
const HOUR = 3_600_000

export function priceAt(symbol: MarketSymbol, time: number, sources: readonly SourceRef[] = symbol.sources): number | undefined {
  for (const ref of sources) {
    if (ref.from > time || ref.to <= time) continue
    const bars = ref.bars()
    const i = barContaining(bars, time)
    if (i >= 0) return priceOnPath(knots(bars, i, symbol.pathSeed), time)
  }
  const main = symbol.main.bars()
  if (main.length === 0 || time < firstTime(main)) return undefined
  const last = firstAtOrAfter(main, time + 1) - 1
  return main.close(last)
}

export interface RangeStats {
  open: number
  high: number
  low: number
  close: number
  volume: number
  quoteVolume: number
  takerBuyVolume: number
  takerBuyQuoteVolume: number
}

/**
 * Open, high, low, close and volumes over [from, to): whole bars as recorded, the bars cut by the
 * window's ends along the path with volume in proportion to the time covered. Undefined when no
 * bar overlaps. Long windows read whole coarse bars in the middle and fine bars only at the ends: a
 * 24h window of a minute-recorded symbol is 23 hours and up to 120 minutes, not 1,440 minutes, which
 * made the all-symbol 24h ticker several times faster.
 */
export function rangeStats(symbol: MarketSymbol, from: number, to: number): RangeStats | undefined {
  if (to <= from) return undefined
  const fine = finestCovering(symbol, from, to) ?? symbol.main.bars()
  for (let c = symbol.sources.length - 1; c >= 0; c--) {
    const ref = symbol.sources[c]!
    // Whole bars of hourly or coarser series only: a series of minutes (BTCUSDT 5m, 330k bars) would be
    // parsed on the first 24h ticker for the window's two ends, which the finest bars answer as well.
    if (ref.step < HOUR) continue
    if (ref.step <= fine.step || ref.step % fine.step !== 0 || ref.from > from || ref.to < to) continue
    const coarse = ref.bars()
    const a = Math.ceil(from / coarse.step) * coarse.step
    const b = Math.floor(to / coarse.step) * coarse.step
    if (b - a < coarse.step) continue
    const first = firstAtOrAfter(coarse, a)
    const end = firstAtOrAfter(coarse, b)
    if (end - first !== (b - a) / coarse.step || coarse.time(first) !== a) continue // a gap: not whole
    return merge(merge(rangeStats(symbol, from, a), walk(symbol, coarse, a, b)), rangeStats(symbol, b, to))
  }
  return walk(symbol, fine, from, to)
}

function merge(a: RangeStats | undefined, b: RangeStats | undefined): RangeStats | undefined {
  if (!a || !b) return a ?? b
  return {
    open: a.open,
    high: Math.max(a.high, b.high),
    low: Math.min(a.low, b.low),
    close: b.close,
    volume: a.volume + b.volume,
    quoteVolume: a.quoteVolume + b.quoteVolume,
    takerBuyVolume: a.takerBuyVolume + b.takerBuyVolume,
    takerBuyQuoteVolume: a.takerBuyQuoteVolume + b.takerBuyQuoteVolume,
  }
}

/** The bars of one series over [from, to), cut ones along the path. */
function walk(symbol: MarketSymbol, bars: Bars, from: number, to: number): RangeStats | undefined {
  let i = Math.max(0, firstAtOrAfter(bars, from) - 1)
  let stats: RangeStats | undefined
  for (; i < bars.length && bars.time(i) < to; i++) {
    const start = bars.time(i)
    const end = start + bars.step
    if (end <= from) continue
    const lo = Math.max(from, start)
    const hi = Math.min(to, end)
    let open: number
    let close: number
    let high: number
    let low: number
    let fraction = 1
    if (lo === start && hi === end) {
      open = bars.open(i)
      close = bars.close(i)
      high = bars.high(i)
      low = bars.low(i)
    } else {
      const k = knots(bars, i, symbol.pathSeed)
      open = priceOnPath(k, lo)
      close = priceOnPath(k, hi)
      ;({ high, low } = rangeOnPath(k, lo, hi))
      fraction = (hi - lo) / bars.step
    }
    const volume = bars.volume(i) * fraction
    const quote = quoteVolume(bars, i) * fraction
    const share = takerBuyShare(bars, i, symbol.pathSeed)
    if (!stats) {
      stats = { open, high, low, close, volume: 0, quoteVolume: 0, takerBuyVolume: 0, takerBuyQuoteVolume: 0 }
    }
    stats.high = Math.max(stats.high, high)
    stats.low = Math.min(stats.low, low)
    stats.close = close
    stats.volume += volume
    stats.quoteVolume += quote
    stats.takerBuyVolume += volume * share
    stats.takerBuyQuoteVolume += quote * share
  }
  return stats
}

/**
 * The price path over [from, to] as its vertices: the price at `from`, every knot strictly between
 * (where the path turns), and the price at `to`; the path is straight between two vertices. Read
 * from the finest series covering the whole window (else only the two ends), so a trailing stop can
 * follow the running extreme without sampling every millisecond.
 */
export function pathVertices(symbol: MarketSymbol, from: number, to: number): [number, number][] {
  const start = priceAt(symbol, from)
  const end = priceAt(symbol, to)
  if (start === undefined || end === undefined) return []
  const out: [number, number][] = [[from, start]]
  const bars = finestCovering(symbol, from, to)
  if (bars) {
    for (let i = Math.max(0, firstAtOrAfter(bars, from) - 1); i < bars.length && bars.time(i) < to; i++) {
      const k = knots(bars, i, symbol.pathSeed)
      for (const [t, p] of [[k.t1, k.p1], [k.t2, k.p2], [k.t3, k.p3]] as const) if (t > from && t < to) out.push([t, p])
    }
  }
  out.push([to, end])
  return out
}

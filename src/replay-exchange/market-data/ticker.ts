import { decimal } from './format.js'
import { DAY } from '../common/intervals.js'
import type { MarketSymbol } from './market-symbol.js'
import { rangeStats } from './prices.js'
import { lastTrade, tradeById, tradesBefore } from './trades.js'

/** A /fapi/v1/ticker/24hr row. */
export interface TickerRow {
  symbol: string
  priceChange: string
  priceChangePercent: string
  weightedAvgPrice: string
  lastPrice: string
  lastQty: string
  openPrice: string
  highPrice: string
  lowPrice: string
  volume: string
  quoteVolume: string
  openTime: number
  closeTime: number
  firstId: number
  lastId: number
  count: number
}

/**
 * The rolling 24h window ending at replay `now`, from the same bars and trades as klines and
 * /trades: lastPrice and lastQty are the latest trade's, openPrice the first trade's in the window,
 * high/low along the path, volumes with the window's cut bars in proportion. Undefined before the
 * symbol's first trade.
 */
export function ticker24h(symbol: MarketSymbol, now: number): TickerRow | undefined {
  const last = lastTrade(symbol, now)
  if (!last) return undefined
  const from = now - DAY
  const firstIndex = tradesBefore(symbol, from)
  const first = firstIndex < last.id ? tradeById(symbol, firstIndex + 1) : undefined
  const stats = rangeStats(symbol, from, now + 1)
  const p = symbol.info.pricePrecision
  const q = symbol.info.quantityPrecision
  const tick = symbol.info.tickSize
  const onTick = (v: number) => Math.round(v / tick) * tick
  const open = first?.price ?? last.price
  const high = Math.max(open, last.price, stats ? onTick(stats.high) : last.price)
  const low = Math.min(open, last.price, stats ? onTick(stats.low) : last.price)
  const volume = stats?.volume ?? 0
  const quote = stats?.quoteVolume ?? 0
  const change = last.price - open
  return {
    symbol: symbol.info.symbol,
    priceChange: decimal(change, p),
    priceChangePercent: open > 0 ? ((change / open) * 100).toFixed(3) : '0.000',
    weightedAvgPrice: volume > 0 ? (quote / volume).toFixed(Math.max(p, 2) + 2) : decimal(last.price, p),
    lastPrice: decimal(last.price, p),
    lastQty: last.qty.toFixed(q),
    openPrice: decimal(open, p),
    highPrice: decimal(high, p),
    lowPrice: decimal(low, p),
    volume: volume.toFixed(q),
    quoteVolume: quote.toFixed(2),
    openTime: from,
    closeTime: now,
    firstId: first ? first.id : -1,
    lastId: first ? last.id : -1,
    count: first ? last.id - first.id + 1 : 0,
  }
}

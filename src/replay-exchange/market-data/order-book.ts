import { decimal } from './format.js'
import { averageDailyVolume } from './futures-data.js'
import type { MarketSymbol } from './market-symbol.js'
import { priceAt } from './prices.js'
import { unit } from '../common/seeded.js'

/**
 * A derived order book: no order book is recorded, so the book is a pure function of the symbol and
 * the replay time (README "Derived values"). The best bid is the price path at `now` rounded down
 * to the tick, the best ask one tick above it, and levels follow on every tick outwards. A level's
 * quantity is 1/100,000 of the symbol's average daily volume, growing 4% a level away from the top,
 * times a seeded 0.2–1.8 drawn per price level and second, so the book changes once a second and
 * the same price keeps its quantity within that second whichever side it is on.
 */

export type BookLevel = [price: string, qty: string]

export interface OrderBook {
  /** Replay ms: the book is determined by the time, so the time identifies it and only grows. */
  lastUpdateId: number
  time: number
  bids: BookLevel[]
  asks: BookLevel[]
}

/** The book's levels a side, at most `depth`; undefined before the symbol has a price. */
export function orderBook(symbol: MarketSymbol, now: number, depth: number): OrderBook | undefined {
  const mid = priceAt(symbol, now)
  if (mid === undefined) return undefined
  const { tickSize: tick, stepSize: step, pricePrecision, quantityPrecision } = symbol.info
  // A path price already on the grid (a recorded open or close) stays the bid; 1e-9 absorbs float error.
  const bestBidTicks = Math.max(1, Math.floor(mid / tick + 1e-9))
  const base = averageDailyVolume(symbol, now) * 1e-5
  const second = Math.floor(now / 1000)
  const level = (ticks: number, distance: number): BookLevel => {
    const noise = 0.2 + 1.6 * unit(symbol.seed, ticks, second, 15)
    const qty = Math.max(step, Math.round((base * (1 + 0.04 * distance) * noise) / step) * step)
    return [decimal(ticks * tick, pricePrecision), qty.toFixed(quantityPrecision)]
  }
  const bids: BookLevel[] = []
  const asks: BookLevel[] = []
  for (let i = 0; i < depth && bestBidTicks - i >= 1; i++) bids.push(level(bestBidTicks - i, i))
  for (let i = 0; i < depth; i++) asks.push(level(bestBidTicks + 1 + i, i))
  return { lastUpdateId: now, time: now, bids, asks }
}

/** A /fapi/v1/ticker/bookTicker row: the top of the derived book. */
export interface BookTickerRow {
  symbol: string
  bidPrice: string
  bidQty: string
  askPrice: string
  askQty: string
  time: number
  lastUpdateId: number
}

export function bookTickerRow(symbol: MarketSymbol, now: number): BookTickerRow | undefined {
  const book = orderBook(symbol, now, 1)
  if (!book) return undefined
  const [bid] = book.bids
  const [ask] = book.asks
  return {
    symbol: symbol.info.symbol,
    bidPrice: bid![0],
    bidQty: bid![1],
    askPrice: ask![0],
    askQty: ask![1],
    time: book.time,
    lastUpdateId: book.lastUpdateId,
  }
}

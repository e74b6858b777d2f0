import type { MarketSymbol } from '../../market-data/market-symbol.js'
import { MARK_NOISE, markPrice } from '../../market-data/premium.js'
import { pathVertices, priceAt, rangeStats } from '../../market-data/prices.js'
import { firstTouch } from '../orders/first-touch.js'
import { type AlgoOrder, triggerDirection } from './algo-order.js'

/**
 * When an algo order's condition first holds (research §1.3), read from the same price path as
 * klines, trades and resting limit orders:
 * - CONTRACT_PRICE: the path's trade price, bisected to the millisecond (orders/first-touch.ts).
 * - MARK_PRICE: the derived mark, sampled at each whole second (Binance's mark moves once a second);
 *   the path is searched first for where the mark can come near the trigger (it stays within ±MARK_NOISE
 *   of the path), then the seconds from there are read one by one.
 * - priceProtect (STOP_MARKET / TAKE_PROFIT_MARKET): at the moment the condition holds, an order whose
 *   |mark − path| / mark exceeds the symbol's triggerProtect does not trigger, and waits for the next moment.
 * - TRAILING_STOP_MARKET: the running extreme since placement (highest for SELL, lowest for BUY) along
 *   the path's vertices (or the per-second marks); active once it reached activatePrice; fires when the
 *   price is callbackRate % back from it.
 */
export function firstTrigger(symbol: MarketSymbol, order: AlgoOrder, from: number, to: number): number | undefined {
  if (order.type === 'TRAILING_STOP_MARKET') return order.workingType === 'MARK_PRICE' ? trailingOnMarks(symbol, order, from, to) : trailingOnPath(symbol, order, from, to)
  const direction = triggerDirection(order.type, order.side)
  let cursor = from
  for (let guard = 0; guard < 10_000 && cursor < to; guard++) {
    const time = order.workingType === 'MARK_PRICE' ? firstMarkTouch(symbol, cursor, to, order.triggerPrice, direction) : firstTouch(symbol, cursor, to, order.triggerPrice, direction)
    if (time === undefined) return undefined
    if (!order.priceProtect || withinProtection(symbol, time)) return time
    // The mark's deviation changes once a second: look again from the next second.
    cursor = Math.max(time, Math.ceil((time + 1) / 1000) * 1000 - 1)
  }
  return undefined
}

/** Whether the order's condition already holds at `time` (POST answers -2021 "Order would immediately trigger." then). */
export function wouldTriggerNow(symbol: MarketSymbol, order: Pick<AlgoOrder, 'type' | 'side' | 'triggerPrice' | 'workingType'>, time: number): boolean {
  const latest = latestPrice(symbol, order.workingType, time)
  return triggerDirection(order.type, order.side) === 'down' ? latest <= order.triggerPrice : latest >= order.triggerPrice
}

/** The price a trigger reads at `time`: the path's (CONTRACT_PRICE) or the mark of that second (MARK_PRICE). */
export function latestPrice(symbol: MarketSymbol, workingType: AlgoOrder['workingType'], time: number): number {
  if (workingType === 'MARK_PRICE') return markPrice(symbol, Math.floor(time / 1000) * 1000)?.mark ?? 0
  return priceAt(symbol, time) ?? 0
}

/** Brings a trailing order's running extreme up to `to` (from where it was last tracked). */
export function trackExtreme(symbol: MarketSymbol, order: AlgoOrder, to: number): void {
  if (order.type !== 'TRAILING_STOP_MARKET' || to <= order.trackedUntil) return
  const higher = order.side === 'SELL'
  if (order.workingType === 'MARK_PRICE') {
    for (let second = firstSecondAfter(order.trackedUntil); second <= to; second += 1000) {
      const mark = markPrice(symbol, second)?.mark
      if (mark !== undefined) order.extreme = higher ? Math.max(order.extreme, mark) : Math.min(order.extreme, mark)
    }
  } else {
    const stats = rangeStats(symbol, order.trackedUntil + 1, to + 1)
    if (stats) order.extreme = higher ? Math.max(order.extreme, stats.high) : Math.min(order.extreme, stats.low)
  }
  order.trackedUntil = to
}

const SCAN_SECONDS = 120

function firstSecondAfter(time: number): number {
  return Math.floor(time / 1000) * 1000 + 1000
}

function firstMarkTouch(symbol: MarketSymbol, from: number, to: number, level: number, direction: 'up' | 'down'): number | undefined {
  // The mark is the path × (1 ± MARK_NOISE): it cannot reach the level before the path reaches this one.
  const near = direction === 'down' ? (level / (1 - MARK_NOISE)) * (1 + 1e-12) : (level / (1 + MARK_NOISE)) * (1 - 1e-12)
  let cursor = from
  while (cursor < to) {
    const touched = firstTouch(symbol, cursor, to, near, direction)
    if (touched === undefined) return undefined
    let second = Math.ceil(touched / 1000) * 1000
    if (second > to) return undefined
    const stop = Math.min(to, second + SCAN_SECONDS * 1000)
    for (; second <= stop; second += 1000) {
      const mark = markPrice(symbol, second)?.mark
      if (mark !== undefined && (direction === 'down' ? mark <= level : mark >= level)) return second
    }
    cursor = Math.max(touched, second - 1000)
  }
  return undefined
}

function withinProtection(symbol: MarketSymbol, time: number): boolean {
  const mark = markPrice(symbol, time)?.mark
  const last = priceAt(symbol, time)
  if (mark === undefined || last === undefined || mark === 0) return true
  return Math.abs(mark - last) / mark <= symbol.info.triggerProtect
}

/** Trailing on the path: straight segments between vertices; the extreme moves on rising (SELL) or falling (BUY) segments only, where the price cannot be back by the callback. */
function trailingOnPath(symbol: MarketSymbol, order: AlgoOrder, from: number, to: number): number | undefined {
  const sell = order.side === 'SELL'
  const rate = order.callbackRate / 100
  let extreme = order.extreme
  const vertices = pathVertices(symbol, from, to)
  for (let i = 1; i < vertices.length; i++) {
    const [ta, pa] = vertices[i - 1]!
    const [tb, pb] = vertices[i]!
    extreme = sell ? Math.max(extreme, pa) : Math.min(extreme, pa)
    const active = sell ? extreme >= order.activatePrice : extreme <= order.activatePrice
    const level = sell ? extreme * (1 - rate) : extreme * (1 + rate)
    if (active && (sell ? pb <= level : pb >= level)) {
      const already = sell ? pa <= level : pa >= level
      const crossing = already || pa === pb ? ta : ta + ((pa - level) / (pa - pb)) * (tb - ta)
      return Math.min(tb, Math.max(from + 1, Math.ceil(crossing)))
    }
  }
  return undefined
}

/** Trailing on the mark: the per-second marks as points. */
function trailingOnMarks(symbol: MarketSymbol, order: AlgoOrder, from: number, to: number): number | undefined {
  const sell = order.side === 'SELL'
  const rate = order.callbackRate / 100
  let extreme = order.extreme
  for (let second = firstSecondAfter(from); second <= to; second += 1000) {
    const mark = markPrice(symbol, second)?.mark
    if (mark === undefined) continue
    extreme = sell ? Math.max(extreme, mark) : Math.min(extreme, mark)
    const active = sell ? extreme >= order.activatePrice : extreme <= order.activatePrice
    if (active && (sell ? mark <= extreme * (1 - rate) : mark >= extreme * (1 + rate))) return second
  }
  return undefined
}

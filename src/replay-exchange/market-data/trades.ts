import { type Bars, firstAtOrAfter } from './recorded/bars.js'
import { HOUR } from '../common/intervals.js'
import type { MarketSymbol } from './market-symbol.js'
import { quoteVolume, takerBuyShare } from './path.js'
import { priceAt } from './prices.js'
import { unit } from '../common/seeded.js'

/**
 * Derived trades. Each bar of the symbol's main series holds a number of trades that follows its
 * quote volume, spaced evenly through the bar. Trade ids are
 * 1-based positions in that schedule, so they increase without gaps, the 24h count is
 * lastId − firstId + 1, and any trade can be computed from its id alone.
 */

export interface Trade {
  id: number
  price: number
  qty: number
  time: number
  isBuyerMaker: boolean
}

interface Schedule {
  bars: Bars
  /** prefix[i] = trades in bars before i. */
  prefix: Float64Array
}

const schedules = new WeakMap<MarketSymbol, Schedule>()

function tradesInBar(bars: Bars, i: number): number {
  const volume = bars.volume(i)
  if (!(volume > 0)) return 0
  const quote = quoteVolume(bars, i)
  const perHour = (quote * HOUR) / bars.step
  // The average trade grows with turnover (square root): ~6,000 USDT and ~100k trades an hour for
  // BTC at 600M USDT an hour, ~560 USDT and ~9k trades for a 5M-an-hour alt.
  const averageNotional = Math.min(20_000, Math.max(10, 0.25 * Math.sqrt(perHour)))
  // At most one trade per 2 ms, so every trade time falls inside its bar.
  return Math.min(Math.floor(bars.step / 2), Math.max(1, Math.round(quote / averageNotional)))
}

function schedule(symbol: MarketSymbol): Schedule {
  let s = schedules.get(symbol)
  if (!s) {
    const bars = symbol.main.bars()
    const prefix = new Float64Array(bars.length + 1)
    for (let i = 0; i < bars.length; i++) prefix[i + 1] = prefix[i]! + tradesInBar(bars, i)
    s = { bars, prefix }
    schedules.set(symbol, s)
  }
  return s
}

/** Trade k (0-based) of a bar with n trades happens just before the k+1-th n-th of the bar, so the last one is 1 ms before it closes. */
function tradeTime(start: number, step: number, k: number, n: number): number {
  return start + Math.floor(((k + 1) * step) / n) - 1
}

/** How many trades happened before `time` (so the id of the last trade at or before `time` is tradesBefore(time + 1)). */
export function tradesBefore(symbol: MarketSymbol, time: number): number {
  const { bars, prefix } = schedule(symbol)
  const i = firstAtOrAfter(bars, time + 1) - 1
  if (i < 0) return 0
  const start = bars.time(i)
  if (time >= start + bars.step) return prefix[i + 1]!
  const n = prefix[i + 1]! - prefix[i]!
  // Trades k with start + floor((k+1)·step/n) − 1 < time, i.e. (k+1)·step < (time − start + 1)·n:
  // integer operands far below 2^53, so the division is exact enough for the floor.
  const within = Math.floor(((time - start + 1) * n - 1) / bars.step)
  return prefix[i]! + Math.min(n, Math.max(0, within))
}

/** The trade with this id (1-based), or undefined when there is none. */
export function tradeById(symbol: MarketSymbol, id: number): Trade | undefined {
  const { bars, prefix } = schedule(symbol)
  const index = id - 1
  if (!Number.isInteger(index) || index < 0 || index >= prefix[prefix.length - 1]!) return undefined
  // The bar i with prefix[i] <= index < prefix[i + 1].
  let lo = 0
  let hi = bars.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (prefix[mid]! <= index) lo = mid
    else hi = mid - 1
  }
  const n = prefix[lo + 1]! - prefix[lo]!
  const k = index - prefix[lo]!
  const time = tradeTime(bars.time(lo), bars.step, k, n)
  const step = symbol.info.stepSize
  const average = bars.volume(lo) / n
  const qty = Math.max(step, Math.round((average * (0.25 + 1.5 * unit(symbol.seed, id, 5))) / step) * step)
  const tick = symbol.info.tickSize
  const price = Math.max(tick, Math.round((priceAt(symbol, time) ?? bars.close(lo)) / tick) * tick)
  return { id, price, qty, time, isBuyerMaker: unit(symbol.seed, id, 6) >= takerBuyShare(bars, lo, symbol.pathSeed) }
}

/** Trades with ids in [fromId, toId], ascending. */
export function tradeRange(symbol: MarketSymbol, fromId: number, toId: number): Trade[] {
  const out: Trade[] = []
  for (let id = Math.max(1, fromId); id <= toId; id++) {
    const trade = tradeById(symbol, id)
    if (!trade) break
    out.push(trade)
  }
  return out
}

/** The latest trade at or before `time`. */
export function lastTrade(symbol: MarketSymbol, time: number): Trade | undefined {
  const count = tradesBefore(symbol, time + 1)
  return count > 0 ? tradeById(symbol, count) : undefined
}

import type { MarketSymbol } from '../../market-data/market-symbol.js'
import { rangeStats } from '../../market-data/prices.js'

/**
 * The first replay time in (from, to] at which the symbol's price path reaches `price` from the
 * given direction ('down': the path's low ≤ price, as a resting buy or a long's liquidation needs;
 * 'up': the high ≥ price), or undefined. Reads the same path as klines and trades (rangeStats), and
 * bisects on the millisecond, so the answer does not depend on how often the exchange checks.
 */
export function firstTouch(symbol: MarketSymbol, from: number, to: number, price: number, direction: 'down' | 'up'): number | undefined {
  const reached = (until: number) => {
    const stats = rangeStats(symbol, from + 1, until + 1)
    if (!stats) return false
    return direction === 'down' ? stats.low <= price : stats.high >= price
  }
  if (to <= from || !reached(to)) return undefined
  let lo = from + 1
  let hi = to
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2)
    if (reached(mid)) hi = mid
    else lo = mid + 1
  }
  return lo
}

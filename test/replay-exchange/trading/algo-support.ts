import { type Bar, MINUTE, readBars } from '../support.js'
import type { Keys, TradingExchange } from './support.js'

const BTC_MINUTES = 'BTCUSDT-1m-20250504-20250624.csv.gz'
let minutes: Bar[] | undefined

/** The recorded BTCUSDT minutes in [from, to), read independently of the exchange. */
export function btcMinutes(from: number, to: number): Bar[] {
  minutes ??= readBars(BTC_MINUTES)
  return minutes.filter((b) => b.time >= from && b.time < to)
}

/** The minute bar holding replay time `time`. */
export function minuteOf(time: number): Bar {
  return btcMinutes(Math.floor(time / MINUTE) * MINUTE, Math.floor(time / MINUTE) * MINUTE + MINUTE)[0]!
}

/** A price on BTCUSDT's 0.1 tick grid. */
export const tick = (price: number) => (Math.round(price * 10) / 10).toFixed(1)

/**
 * A level the recorded path crosses downwards within the next `minutes` (just above the lowest low
 * of minutes 1..n ahead) and is above the price now: a SELL stop there triggers, and not at once.
 */
export function dropLevel(now: number, ahead = 30): number {
  const bars = btcMinutes(Math.floor(now / MINUTE) * MINUTE + MINUTE, now + ahead * MINUTE)
  return Math.ceil(Math.min(...bars.map((b) => b.low)) * 10) / 10 + 0.1
}

/** A level the path crosses upwards within the next `minutes` (just under the highest high ahead). */
export function riseLevel(now: number, ahead = 30): number {
  const bars = btcMinutes(Math.floor(now / MINUTE) * MINUTE + MINUTE, now + ahead * MINUTE)
  return Math.floor(Math.max(...bars.map((b) => b.high)) * 10) / 10 - 0.1
}

export const algo = (params: Record<string, string>) => ({ algoType: 'CONDITIONAL', symbol: 'BTCUSDT', ...params })

/** Opens a BTCUSDT position with a MARKET order (qty signed: + long, − short). */
export async function open(t: TradingExchange, keys: Keys, qty: number): Promise<void> {
  const res = await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: qty > 0 ? 'BUY' : 'SELL', type: 'MARKET', quantity: Math.abs(qty).toFixed(3) })
  if (res.status !== 200) throw new Error(`open: ${JSON.stringify(res.body)}`)
}

export async function positionAmt(t: TradingExchange, keys: Keys): Promise<number> {
  const [position] = (await t.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'BTCUSDT' })).body
  return Number(position.positionAmt)
}

import { assertKnownSymbol } from './exchange-info.js'
import type { MarketSession } from './market-data.js'
import type { AccountRatioRow, PositionRatioRow } from './schemas.js'
import { parseAccountRatios, parsePositionRatios } from './upstream-payloads.js'
import { type Period, upstream } from './upstream-requests.js'

export const RATIO_DEFAULTS = { period: '5m', limit: 10 } as const

/** GET /long-short/position-ratio/{symbol}: the top traders' long and short shares of their open positions. */
export async function positionRatios(market: MarketSession, symbol: string, period: Period, limit: number): Promise<PositionRatioRow[]> {
  await assertKnownSymbol(market, symbol)
  return parsePositionRatios(await market.fetch(upstream.series('topLongShortPositionRatio', symbol, period, limit)), symbol)
}

/** GET /long-short/account-ratio/{symbol}: the shares of top-trader accounts that are net long and net short. */
export async function accountRatios(market: MarketSession, symbol: string, period: Period, limit: number): Promise<AccountRatioRow[]> {
  await assertKnownSymbol(market, symbol)
  return parseAccountRatios(await market.fetch(upstream.series('topLongShortAccountRatio', symbol, period, limit)), symbol)
}

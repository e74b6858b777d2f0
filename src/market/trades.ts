import { invalidParameter } from '../http/errors.js'
import { assertKnownSymbol } from './exchange-info.js'
import type { MarketSession } from './market-data.js'
import { parseTradesNewestFirst, type TradePoint } from './upstream-payloads.js'
import { upstream } from './upstream-requests.js'

/** GET /v1/market/trades: the symbol's recent trades, most recent first. */
export async function recentTrades(market: MarketSession, symbol: string | undefined, limit: number): Promise<TradePoint[]> {
  if (symbol === undefined) throw invalidParameter('symbol', 'symbol is required')
  await assertKnownSymbol(market, symbol)
  return parseTradesNewestFirst(await market.fetch(upstream.trades(symbol, limit)), symbol)
}

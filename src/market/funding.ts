import { AppError } from '../http/errors.js'
import { assertKnownSymbol } from './exchange-info.js'
import type { MarketSession } from './market-data.js'
import type { FundingHistoryQuery, FundingHistoryRow, FundingRate } from './schemas.js'
import { parseFundingHistory, parseFundingRates, unknownSymbol } from './upstream-payloads.js'
import { upstream } from './upstream-requests.js'

/** GET /funding/rates as JSON text: rendered once per upstream answer, the hot path of the gateway. */
export async function fundingRatesJson(market: MarketSession): Promise<string> {
  const entry = await market.fetch(upstream.premiumIndex())
  return entry.derive('fundingRatesJson', () => JSON.stringify(parseFundingRates(entry)))
}

/** GET /funding/rates/{symbol}: the symbol's row of the same all-symbols answer (one upstream call serves every symbol). */
export async function fundingRate(market: MarketSession, symbol: string): Promise<FundingRate> {
  const entry = await market.fetch(upstream.premiumIndex())
  const bySymbol = entry.derive('fundingRatesBySymbol', () => new Map(parseFundingRates(entry).map((row) => [row.symbol, row])))
  const row = bySymbol.get(symbol)
  if (!row) throw unknownSymbol(symbol)
  return row
}

/** GET /funding/rates/{symbol}/history: the exchange's funding history, oldest first. */
export async function fundingHistory(market: MarketSession, symbol: string, query: FundingHistoryQuery): Promise<FundingHistoryRow[]> {
  if (query.start_time !== undefined && query.end_time !== undefined && query.start_time > query.end_time) {
    throw new AppError('INVALID_PARAMETER', 'start_time must not be after end_time', { field: 'start_time' })
  }
  await assertKnownSymbol(market, symbol)
  const entry = await market.fetch(
    upstream.fundingHistory({ symbol, startTime: query.start_time, endTime: query.end_time, limit: query.limit ?? 100 }),
  )
  return parseFundingHistory(entry, symbol)
}

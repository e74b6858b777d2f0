import { AppError } from '../http/errors.js'
import { assertKnownSymbol } from './exchange-info.js'
import type { MarketSession } from './market-data.js'
import type { FundingHistoryQuery, FundingHistoryRow, FundingRate } from './schemas.js'
import { parseFundingHistory, parseFundingRates } from './upstream-payloads.js'
import { upstream } from './upstream-requests.js'

/**
 * GET /funding/rates as encoded JSON: rendered once per upstream answer, the hot path of the gateway.
 * A Buffer rather than a string: encoding the 80 KB answer on every response cost a third of its throughput.
 */
export async function fundingRatesJson(market: MarketSession): Promise<Buffer> {
  const entry = await market.fetch(upstream.premiumIndex())
  return entry.derive('fundingRatesJson', () => Buffer.from(JSON.stringify(parseFundingRates(entry))))
}

/** GET /funding/rates/{symbol}: the symbol's row of the same all-symbols answer (one upstream call serves every symbol). */
export async function fundingRate(market: MarketSession, symbol: string): Promise<FundingRate> {
  const entry = await market.fetch(upstream.premiumIndex())
  const bySymbol = entry.derive('fundingRatesBySymbol', () => new Map(parseFundingRates(entry).map((row) => [row.symbol, row])))
  const row = bySymbol.get(symbol)
  if (row) return row
  await assertKnownSymbol(market, symbol)
  throw new AppError('NOT_FOUND', `${symbol} has no funding rate (not a perpetual contract)`)
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

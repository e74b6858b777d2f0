import type { MarketSession, UpstreamRequest } from './market-data.js'
import { type Period, upstream } from './upstream-requests.js'

export interface Forwarded {
  status: number
  /** Encoded once per upstream answer (the all-symbols ticker is 160 KB). */
  body: Buffer
}

/**
 * The mirror endpoints: the exchange's status and body, unchanged (its 4xx refusals included). Its
 * 5xx, 429/418 and unreachability are 502s (or the last good answer while one is kept).
 */
export async function forward(market: MarketSession, request: UpstreamRequest): Promise<Forwarded> {
  const entry = await market.fetch(request)
  return { status: entry.status, body: entry.derive('bodyBytes', () => Buffer.from(entry.body)) }
}

export const mirrorRequests = {
  fundingRate: (query: { symbol?: string; limit?: number; startTime?: number; endTime?: number }) => upstream.fundingHistory(query),
  tickers: () => upstream.tickers(),
  positionRatio: (symbol: string, period: Period, limit: number) => upstream.series('topLongShortPositionRatio', symbol, period, limit),
  accountRatio: (symbol: string, period: Period, limit: number) => upstream.series('topLongShortAccountRatio', symbol, period, limit),
}

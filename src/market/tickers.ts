import type { MarketSession } from './market-data.js'
import type { CachedResponse } from './response-cache.js'
import type { TickerRow } from './schemas.js'
import { parseTickers } from './upstream-payloads.js'
import { upstream } from './upstream-requests.js'

/** USDC-margined contracts (BTCUSDC, and delivery ones like BTCUSDC_250627) are left out of the active list. */
const USDC_QUOTED = /USDC(_\d+)?$/

/** The all-symbols tickers with quoteVolume as a number, largest first: shared by the active list and the boards. */
export async function tickersByVolume(market: MarketSession): Promise<{ row: TickerRow; quoteVolume: number }[]> {
  return byVolume(await market.fetch(upstream.tickers()))
}

function byVolume(entry: CachedResponse): { row: TickerRow; quoteVolume: number }[] {
  return entry.derive('tickersByVolume', () =>
    parseTickers(entry)
      .map((row) => ({ row, quoteVolume: Number(row.quoteVolume) }))
      .filter((ticker) => Number.isFinite(ticker.quoteVolume))
      .sort((a, b) => b.quoteVolume - a.quoteVolume || (a.row.symbol < b.row.symbol ? -1 : 1)),
  )
}

/**
 * GET /ticker/24hr/active as encoded JSON: quoteVolume >= the minimum, largest first, USDC-quoted
 * symbols excluded. Rendered once per upstream answer and minimum: 1000 clients polling it cost one
 * upstream call and one rendering per second.
 */
export async function activeTickersJson(market: MarketSession, minQuoteVolume: number): Promise<Buffer> {
  const entry = await market.fetch(upstream.tickers())
  const tickers = byVolume(entry)
  return entry.derive(`active:${minQuoteVolume}`, () =>
    Buffer.from(
      JSON.stringify(tickers.filter((ticker) => ticker.quoteVolume >= minQuoteVolume && !USDC_QUOTED.test(ticker.row.symbol)).map((ticker) => ticker.row)),
    ),
  )
}

/** USDT-quoted perpetual symbols by 24h quote volume, largest first, at most `max` (the universe of the smart-money boards). */
export async function usdtSymbolsByVolume(market: MarketSession, minQuoteVolume: number, max = Infinity): Promise<{ symbol: string; quoteVolume: string }[]> {
  const tickers = await tickersByVolume(market)
  return tickers
    .filter((ticker) => ticker.quoteVolume >= minQuoteVolume && ticker.row.symbol.endsWith('USDT'))
    .slice(0, max)
    .map((ticker) => ({ symbol: ticker.row.symbol, quoteVolume: ticker.row.quoteVolume }))
}

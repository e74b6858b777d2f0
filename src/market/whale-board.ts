import type { MarketSession } from './market-data.js'
import { FIVE_MINUTE_POINTS, optional } from './top-traders.js'
import type { WhaleBoard } from './smart-money-schemas.js'
import { usdtSymbolsByVolume } from './tickers.js'
import { parsePositionRatios } from './upstream-payloads.js'
import { upstream } from './upstream-requests.js'

/** At most this many symbols (the most traded): one /futures/data call each per 30 s. */
export const WHALE_BOARD_SYMBOLS = 50

/** |ln(ratio)| × log10(quoteVolume): how lopsided the whales are, weighted by how much the market trades. */
export function whaleScore(longShortRatio: number, quoteVolume: number): number {
  return Math.round(Math.abs(Math.log(longShortRatio)) * Math.log10(Math.max(1, quoteVolume)) * 10_000) / 10_000
}

/** GET /whale-board. */
export async function whaleBoard(market: MarketSession, minQuoteVolume: number, now: number): Promise<WhaleBoard> {
  const universe = await usdtSymbolsByVolume(market, minQuoteVolume, WHALE_BOARD_SYMBOLS)
  const rows = await Promise.all(
    universe.map(async ({ symbol, quoteVolume }) => {
      const entry = await market.fetch(upstream.series('topLongShortPositionRatio', symbol, '5m', FIVE_MINUTE_POINTS))
      const latest = optional(() => parsePositionRatios(entry, symbol).at(-1))
      const whaleLongShort = latest ? Number(latest.longShortRatio) : Number.NaN
      if (!latest || !(whaleLongShort > 0) || !Number.isFinite(whaleLongShort)) return undefined
      return { symbol, quoteVolume, whaleLongShort: latest.longShortRatio, score: whaleScore(whaleLongShort, Number(quoteVolume)) }
    }),
  )
  return {
    generatedAt: now,
    rows: rows.filter((row) => row !== undefined).sort((a, b) => b.score - a.score || (a.symbol < b.symbol ? -1 : 1)),
  }
}

import type { MarketSession } from './market-data.js'
import { FIVE_MINUTE_POINTS, optional } from './top-traders.js'
import type { WhaleBoard } from './smart-money-schemas.js'
import { usdtSymbolsByVolume } from './tickers.js'
import { parsePositionRatios } from './upstream-payloads.js'
import { ratioTtlMs, upstream } from './upstream-requests.js'

/**
 * The board's share of the /futures/data request budget: Binance allows 1000 per 5 min per IP, we
 * stop at 900 (750 for refreshes); half of it leaves the ratio endpoints and smart money room.
 */
const BOARD_REQUESTS_PER_5_MIN = 450
const FIVE_MINUTES = 5 * 60_000

/**
 * How long the board reuses a symbol's 5m position series: the series' own 30 s while the board
 * covers up to 45 symbols, longer beyond, so that keeping every symbol fresh stays within the
 * board's share (150 symbols: 100 s), and at most the 5 minutes in which the series gains a point.
 * The board covers every symbol at or above the volume filter (the spec), not a fixed top 50.
 */
export function boardSeriesTtlMs(symbols: number): number {
  return Math.min(FIVE_MINUTES, Math.max(ratioTtlMs('5m'), Math.ceil((symbols * FIVE_MINUTES) / BOARD_REQUESTS_PER_5_MIN)))
}

/** |ln(ratio)| × log10(quoteVolume): how lopsided the whales are, weighted by how much the market trades. */
export function whaleScore(longShortRatio: number, quoteVolume: number): number {
  return Math.round(Math.abs(Math.log(longShortRatio)) * Math.log10(Math.max(1, quoteVolume)) * 10_000) / 10_000
}

/** GET /whale-board. */
export async function whaleBoard(market: MarketSession, minQuoteVolume: number, now: number): Promise<WhaleBoard> {
  const universe = await usdtSymbolsByVolume(market, minQuoteVolume)
  const ttlMs = boardSeriesTtlMs(universe.length)
  const rows = await Promise.all(
    universe.map(async ({ symbol, quoteVolume }) => {
      const entry = await market.fetch({ ...upstream.series('topLongShortPositionRatio', symbol, '5m', FIVE_MINUTE_POINTS), ttlMs })
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

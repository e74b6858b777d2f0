import { AppError } from '../http/errors.js'
import { oneOfMessage, quoted } from '../http/schema-issues.js'
import type { MarketSession } from './market-data.js'
import { fixed, lastN, ratio, sum } from './numbers.js'
import { FIVE_MINUTE_POINTS, netOf, optional } from './top-traders.js'
import { type SmartMoneyList, type SmartMoneyRow, TIME_RANGES, type TimeRange } from './smart-money-schemas.js'
import { usdtSymbolsByVolume } from './tickers.js'
import { parseOpenInterest, parsePositionRatios, parseTakerVolumes } from './upstream-payloads.js'
import { type Period, upstream } from './upstream-requests.js'

/** Each range read from a series of this period: `intervals` periods, so intervals + 1 points. */
const RANGES: Record<TimeRange, { period: Period; intervals: number; fetch: number }> = {
  '30m': { period: '5m', intervals: 6, fetch: FIVE_MINUTE_POINTS },
  '1h': { period: '5m', intervals: 12, fetch: FIVE_MINUTE_POINTS },
  '24h': { period: '1h', intervals: 24, fetch: 25 },
  '7d': { period: '4h', intervals: 42, fetch: 43 },
}

/** The symbols the list covers: 3 /futures/data calls each per TTL keeps it well inside that budget. */
export const LIST_SYMBOLS = 10

export function parseTimeRange(value: string | undefined): TimeRange {
  const range = value ?? '24h'
  if (!(TIME_RANGES as readonly string[]).includes(range)) {
    throw new AppError('INVALID_PARAMETER', `timeRange ${oneOfMessage(TIME_RANGES, quoted(range))}`, { field: 'timeRange' })
  }
  return range as TimeRange
}

/** GET /smart-money/signal/list. */
export async function smartMoneyList(market: MarketSession, timeRange: TimeRange, now: number): Promise<SmartMoneyList> {
  const { period, intervals, fetch } = RANGES[timeRange]
  const universe = await usdtSymbolsByVolume(market, 0, LIST_SYMBOLS)
  const rows = await Promise.all(
    universe.map(async ({ symbol, quoteVolume }): Promise<Omit<SmartMoneyRow, 'rank'> | undefined> => {
      const [positionEntry, openInterestEntry, takerEntry] = await Promise.all([
        market.fetch(upstream.series('topLongShortPositionRatio', symbol, period, fetch)),
        market.fetch(upstream.series('openInterestHist', symbol, period, fetch)),
        market.fetch(upstream.series('takerlongshortRatio', symbol, period, fetch)),
      ])
      const positions = lastN(optional(() => parsePositionRatios(positionEntry, symbol)) ?? [], intervals + 1)
      const first = positions[0]
      const last = positions.at(-1)
      if (!first || !last) return undefined // the exchange publishes no top-trader series for it
      const openInterest = lastN(optional(() => parseOpenInterest(openInterestEntry, symbol)) ?? [], intervals + 1)
      const taker = lastN(optional(() => parseTakerVolumes(takerEntry, symbol)) ?? [], intervals)
      const valueNow = openInterest.at(-1)?.openInterestValue
      const valueThen = openInterest[0]?.openInterestValue
      const netNow = netOf(last)
      const netThen = netOf(first)
      const buy = taker.length > 0 ? sum(taker.map((point) => point.buyVolume)) : undefined
      const sell = taker.length > 0 ? sum(taker.map((point) => point.sellVolume)) : undefined
      return {
        symbol,
        quoteVolume,
        longShortRatio: last.longShortRatio,
        netPositionShare: fixed(netNow, 4) ?? '0.0000',
        netPositionShareChange: fixed(netNow - netThen, 4) ?? '0.0000',
        netPositionValue: valueNow !== undefined ? fixed(netNow * valueNow, 2) : null,
        netPositionValueChange: valueNow !== undefined && valueThen !== undefined ? fixed(netNow * valueNow - netThen * valueThen, 2) : null,
        takerBuyVolume: fixed(buy, 8),
        takerSellVolume: fixed(sell, 8),
        takerNetVolume: buy !== undefined && sell !== undefined ? fixed(buy - sell, 8) : null,
        takerBuySellRatio: buy !== undefined && sell !== undefined ? fixed(ratio(buy, sell), 4) : null,
      }
    }),
  )
  const ranked = rows
    .filter((row): row is Omit<SmartMoneyRow, 'rank'> => row !== undefined)
    .sort((a, b) => magnitude(b.netPositionValue) - magnitude(a.netPositionValue) || (a.symbol < b.symbol ? -1 : 1))
    .map((row, index) => ({ rank: index + 1, ...row }))
  return { timeRange, period, generatedAt: now, rows: ranked }
}

/** |value|, with a missing value ranked last. */
function magnitude(value: string | null): number {
  return value === null ? -1 : Math.abs(Number(value))
}

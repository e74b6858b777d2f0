import { AppError } from '../http/errors.js'
import { assertKnownSymbol } from './exchange-info.js'
import type { MarketSession } from './market-data.js'
import { fixed, lastN, ratio, sum } from './numbers.js'
import { SIGNALS, type SmartMoneyOverview, WHALE_TRADE_THRESHOLD } from './smart-money-schemas.js'
import { tickersByVolume } from './tickers.js'
import {
  parseAccountRatios,
  parseFundingRates,
  parseOpenInterest,
  parsePositionRatios,
  parseTakerVolumes,
  parseTradesNewestFirst,
} from './upstream-payloads.js'
import { FIVE_MINUTE_POINTS, netOf, optional } from './top-traders.js'
import { upstream } from './upstream-requests.js'

/** The overview reads trades at most this old: counting whales needs no second-fresh trades, and 1000 trades weigh 5. */
const OVERVIEW_TRADES_TTL_MS = 10_000

/** GET /smart-money/signal/overview. */
export async function smartMoneyOverview(market: MarketSession, symbol: string): Promise<SmartMoneyOverview> {
  await assertKnownSymbol(market, symbol)
  const series = (name: Parameters<typeof upstream.series>[0]) => market.fetch(upstream.series(name, symbol, '5m', FIVE_MINUTE_POINTS))
  const [accountEntry, positionEntry, globalEntry, openInterestEntry, takerEntry, premiumEntry, tickers, tradesEntry] = await Promise.all([
    series('topLongShortAccountRatio'),
    series('topLongShortPositionRatio'),
    series('globalLongShortAccountRatio'),
    series('openInterestHist'),
    series('takerlongshortRatio'),
    market.fetch(upstream.premiumIndex()),
    tickersByVolume(market),
    market.fetch(upstream.trades(symbol, 1000, OVERVIEW_TRADES_TTL_MS)),
  ])
  const accounts = parseAccountRatios(accountEntry, symbol)
  const positions = parsePositionRatios(positionEntry, symbol)
  const account = accounts.at(-1)
  const position = positions.at(-1)
  if (!account || !position) throw new AppError('NOT_FOUND', `the exchange publishes no top-trader data for ${symbol}`)
  const global = optional(() => parseAccountRatios(globalEntry, symbol).at(-1))
  const openInterest = optional(() => parseOpenInterest(openInterestEntry, symbol).at(-1))
  const taker = optional(() => lastN(parseTakerVolumes(takerEntry, symbol), 12)) ?? []
  const premium = parseFundingRates(premiumEntry).find((row) => row.symbol === symbol)
  const ticker = tickers.find((item) => item.row.symbol === symbol)
  const whales = whaleTrades(optional(() => parseTradesNewestFirst(tradesEntry, symbol)) ?? [])

  const netShare = netOf(position)
  const hourAgo = positions.length >= FIVE_MINUTE_POINTS ? positions[positions.length - FIVE_MINUTE_POINTS] : undefined
  const netChange = hourAgo ? netShare - netOf(hourAgo) : undefined
  const buy = taker.length > 0 ? sum(taker.map((point) => point.buyVolume)) : undefined
  const sell = taker.length > 0 ? sum(taker.map((point) => point.sellVolume)) : undefined
  const takerRatio = buy !== undefined && sell !== undefined ? ratio(buy, sell) : undefined
  return {
    symbol,
    period: '5m',
    timestamp: position.timestamp,
    markPrice: premium?.markPrice ?? null,
    averagePrice: ticker?.row.weightedAvgPrice ?? null,
    longAccountShare: account.longAccount,
    shortAccountShare: account.shortAccount,
    longShortAccountRatio: account.longShortRatio,
    longPositionShare: position.longPosition,
    shortPositionShare: position.shortPosition,
    longShortPositionRatio: position.longShortRatio,
    globalLongAccountShare: global?.longAccount ?? null,
    globalShortAccountShare: global?.shortAccount ?? null,
    openInterest: openInterest ? fixed(openInterest.openInterest, 8) : null,
    openInterestValue: openInterest ? fixed(openInterest.openInterestValue, 2) : null,
    netPositionShare: fixed(netShare, 4) ?? '0.0000',
    netPositionShareChange1h: fixed(netChange, 4),
    netPositionValue: openInterest ? fixed(netShare * openInterest.openInterestValue, 2) : null,
    takerBuyVolume1h: fixed(buy, 8),
    takerSellVolume1h: fixed(sell, 8),
    takerBuySellRatio1h: fixed(takerRatio, 4),
    whaleTradeThreshold: String(WHALE_TRADE_THRESHOLD),
    ...whales,
    signal: signalOf(netShare, netChange, takerRatio),
  }
}

function whaleTrades(trades: { price: string; qty: string; quoteQty: string; isBuyerMaker: boolean }[]) {
  const whales = trades.filter((trade) => Number(trade.quoteQty) >= WHALE_TRADE_THRESHOLD)
  const quantity = sum(whales.map((trade) => Number(trade.qty)))
  const quote = sum(whales.map((trade) => Number(trade.quoteQty)))
  return {
    whaleCount: whales.length,
    whaleBuyCount: whales.filter((trade) => !trade.isBuyerMaker).length,
    whaleSellCount: whales.filter((trade) => trade.isBuyerMaker).length,
    whaleAveragePrice: whales.length > 0 ? fixed(ratio(quote, quantity), 8) : null,
  }
}

function signalOf(netShare: number, netChange: number | undefined, takerRatio: number | undefined): (typeof SIGNALS)[number] {
  const change = netChange ?? 0
  const flow = takerRatio ?? 1
  if (netShare >= 0.1 && change >= 0 && flow >= 1) return 'bullish'
  if (netShare <= -0.1 && change <= 0 && flow <= 1) return 'bearish'
  return 'neutral'
}

import { invalidData } from '../common/errors.js'
import { integer, type Query, text } from '../common/params.js'
import { decimal } from './format.js'
import { fundingIntervalHours } from './funding.js'
import { openInterestAt } from './futures-data.js'
import type { MarketSymbol } from './market-symbol.js'
import { bookTickerRow, orderBook } from './order-book.js'
import { type PriceKind, priceKlines } from './price-klines.js'
import { priceAt } from './prices.js'
import { klineParams, klinesWeight, type MarketRouter, type RestDeps } from './rest-routes.js'
import { lastTrade } from './trades.js'

/** /fapi/v1/depth: Binance's accepted limits and their weights (USD-M "Order Book"). */
const DEPTH_WEIGHTS: Record<number, number> = { 5: 2, 10: 2, 20: 2, 50: 2, 100: 5, 500: 10, 1000: 20 }
/** Not in Binance's docs: the cap and floor the replay's derived funding rates keep to (funding.ts). */
const FUNDING_CAP = '0.00750000'

/**
 * The market endpoints ccxt and the `binance` package call besides klines and tickers: last-price
 * tickers, the derived order book and its top, current open interest, mark/index/premium klines and
 * funding info (README "REST"). Binance's parameters, defaults, limits and weights.
 */
export function derivedRoutes(router: MarketRouter, deps: RestDeps): void {
  const { route, listed, trading } = router
  /** One row for `symbol`, or a row for every symbol with data now (the all-symbol form). */
  const oneOrAll = <T>(query: Query, now: number, row: (symbol: MarketSymbol, now: number) => T | undefined) =>
    text(query, 'symbol') !== undefined ? row(trading(query, now), now) : deps.market.all().flatMap((symbol) => row(symbol, now) ?? [])

  const priceTicker = (symbol: MarketSymbol, now: number) => {
    const trade = lastTrade(symbol, now)
    return trade && { symbol: symbol.info.symbol, price: decimal(trade.price, symbol.info.pricePrecision), time: trade.time }
  }
  const priceWeight = (query: Query) => (query.symbol ? 1 : 2)
  route('/fapi/v1/ticker/price', priceWeight, (query, now) => oneOrAll(query, now, priceTicker))
  route('/fapi/v2/ticker/price', priceWeight, (query, now) => oneOrAll(query, now, priceTicker))
  route('/fapi/v1/ticker/bookTicker', (query) => (query.symbol ? 2 : 5), (query, now) => oneOrAll(query, now, bookTickerRow))

  route(
    '/fapi/v1/depth',
    (query) => DEPTH_WEIGHTS[Number(query.limit ?? 500)] ?? 10,
    (query, now) => {
      const symbol = trading(query, now)
      const depth = integer(query, 'limit') ?? 500
      if (DEPTH_WEIGHTS[depth] === undefined) throw invalidData('limit')
      const book = orderBook(symbol, now, depth)!
      return { lastUpdateId: book.lastUpdateId, E: now, T: book.time, bids: book.bids, asks: book.asks }
    },
  )

  route('/fapi/v1/openInterest', 1, (query, now) => {
    const symbol = trading(query, now)
    return { symbol: symbol.info.symbol, openInterest: openInterestAt(symbol, now).toFixed(symbol.info.quantityPrecision), time: now }
  })

  const klinesOf = (kind: PriceKind, symbolParam: 'symbol' | 'pair') => (query: Query, now: number) => {
    const { name, kline } = klineParams(query, symbolParam)
    const symbol = listed(query, name)
    return symbol ? priceKlines(symbol, kind, kline, now) : []
  }
  route('/fapi/v1/markPriceKlines', klinesWeight, klinesOf('mark', 'symbol'))
  // Binance names the index by its pair; a perpetual's pair is its own name (BTCUSDT).
  route('/fapi/v1/indexPriceKlines', klinesWeight, klinesOf('index', 'pair'))
  route('/fapi/v1/premiumIndexKlines', klinesWeight, klinesOf('premium', 'symbol'))

  // Binance lists only symbols whose cap, floor or interval was adjusted; here every symbol with data
  // now is listed with its funding grid (the premium snapshot's: 1, 2, 4 or 8 hours) and the cap its
  // funding keeps, so a client learns each interval.
  route('/fapi/v1/fundingInfo', 0, (_query, now) =>
    deps.market.all().flatMap((symbol) =>
      priceAt(symbol, now) === undefined
        ? []
        : [
            {
              symbol: symbol.info.symbol,
              adjustedFundingRateCap: FUNDING_CAP,
              adjustedFundingRateFloor: `-${FUNDING_CAP}`,
              fundingIntervalHours: fundingIntervalHours(symbol),
              disclaimer: false,
            },
          ],
    ),
  )
}

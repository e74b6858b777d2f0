import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ReplayClock } from '../common/clock.js'
import { BinanceError, invalidData, invalidInterval, invalidSymbol } from '../common/errors.js'
import type { ExchangeInfoSnapshot } from './recorded/exchange-info.js'
import { fundingEvent, fundingTimes } from './funding.js'
import { openInterestRows, PERIODS, type PeriodQuery, type RatioKind, ratioRows, takerRows } from './futures-data.js'
import { HOUR, isInterval } from '../common/intervals.js'
import { type KlineQuery, klines } from './klines.js'
import type { Market } from './market.js'
import type { MarketSymbol } from './market-symbol.js'
import { integer, limit, type Query, required, text, timeRange } from '../common/params.js'
import { premiumIndexRow } from './premium.js'
import type { WeightLimiter } from '../common/rate-limit.js'
import { ticker24h } from './ticker.js'
import { type Trade, tradeRange, tradesBefore } from './trades.js'

export interface RestDeps {
  market: Market
  exchangeInfo: ExchangeInfoSnapshot
  clock: ReplayClock
  limiter: WeightLimiter
}

/** Binance's weight for klines (and mark, index and premium klines) by limit (USD-M docs): [1,100) 1, [100,500) 2, [500,1000] 5, above 10. */
export function klinesWeight(query: Query): number {
  const raw = Number(query.limit ?? 500)
  const n = Number.isInteger(raw) && raw > 0 ? raw : 500
  return n < 100 ? 1 : n < 500 ? 2 : n <= 1000 ? 5 : 10
}

/** Kline parameters, checked in Binance's order; `symbolParam` is `pair` for index-price klines. */
export function klineParams(query: Query, symbolParam: 'symbol' | 'pair'): { name: string; kline: KlineQuery } {
  const interval = required(query, 'interval')
  const name = required(query, symbolParam)
  if (!isInterval(interval)) throw invalidInterval()
  const { startTime, endTime } = timeRange(query)
  return { name, kline: { interval, startTime, endTime, limit: limit(query, 500, 1500) } }
}

export type Handler = (query: Query, now: number) => unknown
export type Route = (path: string, weight: number | ((query: Query) => number), handler: Handler, futuresData?: boolean) => void

/** Registers GET routes that charge Binance's weight and answer at replay now, and looks symbols up as Binance does. */
export interface MarketRouter {
  route: Route
  /** A symbol of the exchange (-1121 otherwise); `undefined` when it has no market data at replay time. */
  listed(query: Query, name?: string): MarketSymbol | undefined
  /** A symbol with market data now (-1121 otherwise, as for a symbol not trading). */
  trading(query: Query, now: number): MarketSymbol
}

export function marketRouter(app: FastifyInstance, deps: RestDeps): MarketRouter {
  const { market, clock, limiter } = deps
  const route: Route = (path, weight, handler, futuresData = false) => {
    app.get(path, async (request: FastifyRequest, reply: FastifyReply) => {
      const query = request.query as Query
      const used = limiter.charge(request.ip, typeof weight === 'number' ? weight : weight(query), futuresData)
      reply.header('x-mbx-used-weight-1m', String(used))
      const body = handler(query, clock.now())
      return typeof body === 'string' ? reply.type('application/json').send(body) : body
    })
  }
  const listed = (query: Query, name = required(query, 'symbol')): MarketSymbol | undefined => {
    if (!deps.exchangeInfo.symbols.has(name)) throw invalidSymbol()
    return market.get(name)
  }
  const trading = (query: Query, now: number): MarketSymbol => {
    const symbol = listed(query)
    if (!symbol || tradesBefore(symbol, now + 1) === 0) throw invalidSymbol()
    return symbol
  }
  return { route, listed, trading }
}

/** The /fapi and /futures/data REST endpoints, each with Binance's parameters, defaults, limits and weight. */
export function restRoutes(router: MarketRouter, deps: RestDeps): void {
  const { market } = deps
  const { route, listed, trading } = router

  route('/fapi/v1/ping', 1, () => ({}))
  route('/fapi/v1/time', 1, (_q, now) => ({ serverTime: now }))
  route('/fapi/v1/exchangeInfo', 1, (_q, now) => deps.exchangeInfo.render(now))

  route('/fapi/v1/klines', klinesWeight, (query, now) => {
    const { name, kline } = klineParams(query, 'symbol')
    const symbol = listed(query, name)
    return symbol ? klines(symbol, kline, now) : []
  })

  route('/fapi/v1/fundingRate', 1, (query, now) => {
    const name = text(query, 'symbol')
    const { startTime, endTime } = timeRange(query)
    const n = limit(query, 100, 1000)
    const from = startTime ?? 0
    const to = Math.min(endTime ?? now, now)
    // Binance: without times the most recent `limit`; with a startTime the first `limit` from it.
    const fromEnd = startTime === undefined
    let symbols: MarketSymbol[]
    if (name !== undefined) {
      if (!deps.exchangeInfo.symbols.has(name)) throw invalidSymbol()
      const symbol = market.get(name)
      symbols = symbol ? [symbol] : []
    } else symbols = market.all()
    const events = symbols.flatMap((symbol) => fundingTimes(symbol, from, to, n, fromEnd).map((time) => ({ symbol, time })))
    events.sort((a, b) => a.time - b.time || (a.symbol.info.symbol < b.symbol.info.symbol ? -1 : 1))
    const picked = fromEnd ? events.slice(-n) : events.slice(0, n)
    return picked.map(({ symbol, time }) => {
      const event = fundingEvent(symbol, time)
      return {
        symbol: symbol.info.symbol,
        fundingTime: time,
        fundingRate: event.rate.toFixed(8),
        markPrice: event.markPrice === undefined ? '' : event.markPrice.toFixed(8),
      }
    })
  })

  route(
    '/fapi/v1/premiumIndex',
    (query) => (query.symbol ? 1 : 10),
    (query, now) => {
      if (text(query, 'symbol') !== undefined) return premiumIndexRow(trading(query, now), now)
      return market.all().flatMap((symbol) => premiumIndexRow(symbol, now) ?? [])
    },
  )

  route(
    '/fapi/v1/ticker/24hr',
    (query) => (query.symbol ? 1 : 40),
    (query, now) => {
      if (text(query, 'symbol') !== undefined) return ticker24h(trading(query, now), now)
      return market.all().flatMap((symbol) => ticker24h(symbol, now) ?? [])
    },
  )

  const tradeRow = (symbol: MarketSymbol) => (t: Trade) => ({
    id: t.id,
    price: t.price.toFixed(symbol.info.pricePrecision),
    qty: t.qty.toFixed(symbol.info.quantityPrecision),
    quoteQty: (t.price * t.qty).toFixed(Math.min(8, symbol.info.pricePrecision + symbol.info.quantityPrecision)),
    time: t.time,
    isBuyerMaker: t.isBuyerMaker,
  })

  route('/fapi/v1/trades', 5, (query, now) => {
    const n = limit(query, 500, 1000)
    const symbol = trading(query, now)
    const last = tradesBefore(symbol, now + 1)
    return tradeRange(symbol, last - n + 1, last).map(tradeRow(symbol))
  })

  route('/fapi/v1/aggTrades', 20, (query, now) => {
    const n = limit(query, 500, 1000)
    const fromId = integer(query, 'fromId')
    const { startTime, endTime } = timeRange(query)
    if (startTime !== undefined && endTime !== undefined && endTime - startTime > HOUR) {
      throw new BinanceError(400, -1127, 'More than 1 hours between startTime and endTime.')
    }
    const symbol = trading(query, now)
    const newest = tradesBefore(symbol, now + 1)
    let first: number
    let last: number
    if (fromId !== undefined) {
      first = fromId
      last = Math.min(newest, fromId + n - 1)
    } else if (startTime !== undefined || endTime !== undefined) {
      const from = startTime ?? endTime! - HOUR
      const to = Math.min(now, endTime ?? startTime! + HOUR)
      first = tradesBefore(symbol, from) + 1
      last = Math.min(tradesBefore(symbol, to + 1), first + n - 1)
    } else {
      last = newest
      first = newest - n + 1
    }
    // One fill per aggregate trade (README), so a = f = l.
    return tradeRange(symbol, first, last).map((t) => ({
      a: t.id,
      p: t.price.toFixed(symbol.info.pricePrecision),
      q: t.qty.toFixed(symbol.info.quantityPrecision),
      f: t.id,
      l: t.id,
      T: t.time,
      m: t.isBuyerMaker,
    }))
  })

  const periodQuery = (query: Query): PeriodQuery => {
    required(query, 'symbol')
    const period = PERIODS[required(query, 'period')]
    if (period === undefined) throw invalidData('period')
    const { startTime, endTime } = timeRange(query)
    return { period, startTime, endTime, limit: limit(query, 30, 500) }
  }
  const ratio = (kind: RatioKind): Handler => (query, now) => {
    const q = periodQuery(query)
    return ratioRows(trading(query, now), kind, q, now)
  }
  route('/futures/data/globalLongShortAccountRatio', 0, ratio('globalLongShortAccountRatio'), true)
  route('/futures/data/topLongShortAccountRatio', 0, ratio('topLongShortAccountRatio'), true)
  route('/futures/data/topLongShortPositionRatio', 0, ratio('topLongShortPositionRatio'), true)
  route(
    '/futures/data/takerlongshortRatio',
    0,
    (query, now) => {
      const q = periodQuery(query)
      return takerRows(trading(query, now), q, now)
    },
    true,
  )
  route(
    '/futures/data/openInterestHist',
    0,
    (query, now) => {
      const q = periodQuery(query)
      return openInterestRows(trading(query, now), q, now)
    },
    true,
  )
}

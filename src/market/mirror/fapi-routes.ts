import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { MarketRoutesOptions } from '../gateway-routes.js'
import { NoQuerySchema, symbolOf } from '../schemas.js'
import { upstream } from '../upstream-requests.js'
import { forward, forwardAllOrRow, sendForwarded } from './forward.js'
import { ADDITION, additionTags as tags, mirrorConfig as config, mirrorErrors as errors } from './mirror-route-options.js'
import { ExchangeAnswerSchema, ExchangeRowsSchema, KlineRowsSchema, KlinesQuerySchema, OptionalSymbolQuerySchema, SymbolQuerySchema } from './schemas.js'
import { serverTime } from './server-time.js'


/** Binance's public /fapi/v1 market endpoints under their own paths, so Binance clients (ccxt) can use Perpetua as their base URL. */
export const fapiMirrorRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (fastify, { market, now }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const schema = <Q>(summary: string, querystring: Q, answer: unknown = ExchangeAnswerSchema) => ({
    tags,
    summary,
    description: ADDITION,
    querystring,
    response: { 200: answer, ...errors },
  })

  app.get('/fapi/v1/ping', { config, schema: schema('Connectivity: {}', NoQuerySchema) }, async (_request, reply) =>
    sendForwarded(reply, await forward(market.session(), upstream.ping())),
  )

  app.get('/fapi/v1/time', { config, schema: schema('The exchange’s clock: {"serverTime"}', NoQuerySchema) }, async (_request, reply) =>
    sendForwarded(reply, await serverTime(market.session(), now())),
  )

  app.get('/fapi/v1/exchangeInfo', { config, schema: schema('Symbols, filters and rate limits, as the exchange gives them', NoQuerySchema) }, async (_request, reply) =>
    sendForwarded(reply, await forward(market.session(), upstream.exchangeInfo())),
  )

  app.get('/fapi/v1/klines', { config, schema: schema('Klines (candlesticks), oldest first', KlinesQuerySchema, KlineRowsSchema) }, async (request, reply) => {
    const { symbol, interval, startTime, endTime, limit = 500 } = request.query
    return sendForwarded(reply, await forward(market.session(), upstream.klines({ symbol: symbolOf(symbol), interval, startTime, endTime, limit }, now())))
  })

  app.get(
    '/fapi/v1/premiumIndex',
    { config, schema: schema('Mark price, index price and funding of every symbol, or one symbol’s object', OptionalSymbolQuerySchema) },
    async (request, reply) => sendForwarded(reply, await forwardAllOrRow(market.session(), upstream.premiumIndex(), request.query.symbol && symbolOf(request.query.symbol))),
  )

  app.get('/fapi/v1/openInterest', { config, schema: schema('Open interest of one symbol', SymbolQuerySchema) }, async (request, reply) =>
    sendForwarded(reply, await forward(market.session(), upstream.openInterest(symbolOf(request.query.symbol)))),
  )

  app.get(
    '/fapi/v1/fundingInfo',
    { config, schema: schema('Funding caps, floors and intervals of the symbols with adjusted funding', NoQuerySchema, ExchangeRowsSchema) },
    async (_request, reply) => sendForwarded(reply, await forward(market.session(), upstream.fundingInfo())),
  )

  app.get(
    '/fapi/v1/ticker/price',
    { config, schema: schema('Last price of every symbol, or one symbol’s object', OptionalSymbolQuerySchema) },
    async (request, reply) => sendForwarded(reply, await forwardAllOrRow(market.session(), upstream.tickerPrices(), request.query.symbol && symbolOf(request.query.symbol))),
  )
}

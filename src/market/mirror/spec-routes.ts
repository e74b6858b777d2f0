import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import type { MarketRoutesOptions } from '../gateway-routes.js'
import { RATIO_DEFAULTS } from '../long-short.js'
import {
  FundingHistoryRowSchema,
  MirrorFundingQuerySchema,
  RatioQuerySchema,
  symbolOf,
  TickerRowSchema,
  UpstreamPositionRatioRowSchema,
  UpstreamRatioRowSchema,
} from '../schemas.js'
import { upstream } from '../upstream-requests.js'
import { forward, forwardAllOrRow, forwarded, sendForwarded } from './forward.js'
import { mirrorConfig as config, mirrorErrors as errors } from './mirror-route-options.js'
import { withPositionShares } from './position-shares.js'
import { OptionalSymbolQuerySchema } from './schemas.js'

const tags = ['market data (mirror)']

/** The spec's default, which Binance's own (100) is not: sent when the client gives none. */
const FUNDING_RATE_DEFAULT_LIMIT = 500

/** The mirror endpoints of the spec ("Mirror market-data endpoints" and the two query-symbol ratio endpoints). */
export const specMirrorRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (fastify, { market }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/fapi/v1/fundingRate',
    {
      config,
      schema: {
        tags,
        summary: 'Funding rate history, forwarded from the exchange (default limit 500)',
        querystring: MirrorFundingQuerySchema,
        response: { 200: Type.Array(FundingHistoryRowSchema), ...errors },
      },
    },
    async (request, reply) => {
      const { symbol, startTime, endTime, limit = FUNDING_RATE_DEFAULT_LIMIT } = request.query
      return sendForwarded(reply, await forward(market.session(), upstream.fundingHistory({ symbol: symbol && symbolOf(symbol), startTime, endTime, limit })))
    },
  )

  app.get(
    '/fapi/v1/ticker/24hr',
    {
      config,
      schema: {
        tags,
        summary: '24 h statistics of every symbol, forwarded from the exchange; with `symbol` (our addition, as Binance) that symbol’s row object',
        querystring: OptionalSymbolQuerySchema,
        response: { 200: Type.Union([Type.Array(TickerRowSchema), TickerRowSchema]), ...errors },
      },
    },
    async (request, reply) => sendForwarded(reply, await forwardAllOrRow(market.session(), upstream.tickers(), request.query.symbol && symbolOf(request.query.symbol))),
  )

  app.get(
    '/topLongShortPositionRatio',
    {
      config,
      schema: {
        tags,
        summary: 'Top traders’ long/short position ratio from the exchange’s /futures/data, with longPosition and shortPosition beside its own fields',
        querystring: RatioQuerySchema,
        response: { 200: Type.Array(UpstreamPositionRatioRowSchema), ...errors },
      },
    },
    async (request, reply) => {
      const { symbol, period = RATIO_DEFAULTS.period, limit = RATIO_DEFAULTS.limit, startTime, endTime } = request.query
      const entry = await market.session().fetch(upstream.series('topLongShortPositionRatio', symbolOf(symbol), period, limit, { startTime, endTime }))
      return sendForwarded(reply, withPositionShares(entry))
    },
  )

  app.get(
    '/topLongShortAccountRatio',
    {
      config,
      schema: {
        tags,
        summary: 'Top traders’ long/short account ratio, forwarded from the exchange’s /futures/data',
        querystring: RatioQuerySchema,
        response: { 200: Type.Array(UpstreamRatioRowSchema), ...errors },
      },
    },
    async (request, reply) => {
      const { symbol, period = RATIO_DEFAULTS.period, limit = RATIO_DEFAULTS.limit, startTime, endTime } = request.query
      const entry = await market.session().fetch(upstream.series('topLongShortAccountRatio', symbolOf(symbol), period, limit, { startTime, endTime }))
      return sendForwarded(reply, forwarded(entry))
    },
  )
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { RATIO_DEFAULTS } from './long-short.js'
import type { MarketRoutesOptions } from './gateway-routes.js'
import { sendJsonText } from './json-reply.js'
import { forward, type Forwarded, mirrorRequests } from './mirror.js'
import {
  DetailSchema,
  FundingHistoryRowSchema,
  MirrorFundingQuerySchema,
  NoQuerySchema,
  RatioQuerySchema,
  symbolOf,
  TickerRowSchema,
  UpstreamRatioRowSchema,
  ValidationErrorSchema,
} from './schemas.js'

const config = { access: { kind: 'public' as const } }
const tags = ['market data (mirror)']
const ExchangeErrorSchema = Type.Object({ code: Type.Integer(), msg: Type.String() }, { description: 'The exchange’s refusal, forwarded unchanged' })
const errors = { 400: ExchangeErrorSchema, 422: ValidationErrorSchema, 502: DetailSchema }

function send(reply: FastifyReply, forwarded: Forwarded): FastifyReply {
  return sendJsonText(reply, forwarded.body, forwarded.status)
}

/** The mirror endpoints (spec "Mirror market-data endpoints"): the exchange's answers, unchanged. */
export const mirrorRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (fastify, { market }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/fapi/v1/fundingRate',
    {
      config,
      schema: {
        tags,
        summary: 'Funding rate history, forwarded from the exchange',
        querystring: MirrorFundingQuerySchema,
        response: { 200: Type.Array(FundingHistoryRowSchema), ...errors },
      },
    },
    async (request, reply) => send(reply, await forward(market.session(), mirrorRequests.fundingRate({ ...request.query, symbol: request.query.symbol && symbolOf(request.query.symbol) }))),
  )

  app.get(
    '/fapi/v1/ticker/24hr',
    {
      config,
      schema: {
        tags,
        summary: '24 h statistics of every symbol, forwarded from the exchange',
        querystring: NoQuerySchema,
        response: { 200: Type.Array(TickerRowSchema), ...errors },
      },
    },
    async (_request, reply) => send(reply, await forward(market.session(), mirrorRequests.tickers())),
  )

  app.get(
    '/topLongShortPositionRatio',
    {
      config,
      schema: {
        tags,
        summary: 'Top traders’ long/short position ratio, forwarded from the exchange’s /futures/data',
        querystring: RatioQuerySchema,
        response: { 200: Type.Array(UpstreamRatioRowSchema), ...errors },
      },
    },
    async (request, reply) => {
      const { symbol, period = RATIO_DEFAULTS.period, limit = RATIO_DEFAULTS.limit } = request.query
      return send(reply, await forward(market.session(), mirrorRequests.positionRatio(symbolOf(symbol), period, limit)))
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
      const { symbol, period = RATIO_DEFAULTS.period, limit = RATIO_DEFAULTS.limit } = request.query
      return send(reply, await forward(market.session(), mirrorRequests.accountRatio(symbolOf(symbol), period, limit)))
    },
  )
}

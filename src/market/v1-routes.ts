import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import type { Access } from '../http/access.js'
import { ErrorEnvelopeSchema, SIGNED_SECURITY } from '../http/common-schemas.js'
import { exchangeInfoJson } from './exchange-info.js'
import { ExchangeInfoQuerySchema, ExchangeInfoSchema, PublicTradeSchema, TradesQuerySchema } from './exchange-info-schemas.js'
import type { MarketRoutesOptions } from './gateway-routes.js'
import { sendJsonTextSoon } from './json-reply.js'
import { symbolOf } from './schemas.js'
import { recentTrades } from './trades.js'

/** Public, signing optional: weight charged to the signing key, else to the IP; a signing key needs market:read. */
const access = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: false, weight, scope: 'market:read' } })
const tags = ['market data']
/** Signing is optional: no credentials, the signing headers, or a Bearer app token. */
const security = [{}, ...SIGNED_SECURITY]
const errors = {
  400: ErrorEnvelopeSchema,
  401: ErrorEnvelopeSchema,
  403: ErrorEnvelopeSchema,
  429: ErrorEnvelopeSchema,
  502: ErrorEnvelopeSchema,
}

/** The /v1/market endpoints (weights from the spec's "Limits"). */
export const v1MarketRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (fastify, { market, now }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/market/exchange-info',
    {
      config: access(10),
      schema: {
        tags,
        security,
        summary: 'Symbols with status, precisions and order filters (weight 10)',
        querystring: ExchangeInfoQuerySchema,
        response: { 200: ExchangeInfoSchema, ...errors },
      },
    },
    (request, reply) => sendJsonTextSoon(reply, exchangeInfoJson(market.session(), now(), request.query.symbol && symbolOf(request.query.symbol))),
  )

  app.get(
    '/v1/market/trades',
    {
      config: access(5),
      schema: {
        tags,
        security,
        summary: 'Recent trades of a symbol, most recent first (weight 5)',
        querystring: TradesQuerySchema,
        response: { 200: Type.Array(PublicTradeSchema), ...errors },
      },
    },
    async (request) => recentTrades(market.session(), request.query.symbol && symbolOf(request.query.symbol), request.query.limit ?? 500),
  )
}

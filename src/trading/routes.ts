import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { TSchema } from 'typebox'
import { ValidationErrorSchema } from '../strategies/public-schemas.js'
import {
  CancelOrderSchema,
  CredentialsBodySchema,
  ExchangeAnswerSchema,
  ExchangeFailureSchema,
  ExchangeRejectionSchema,
  LeverageSchema,
  MarginTypeSchema,
  OptionalSymbolBodySchema,
  PlaceOrderSchema,
  SymbolBodySchema,
} from './schemas.js'
import * as trading from './service.js'
import type { TradingDeps, TradingResult } from './service.js'

const ADDITION =
  'Our addition (the spec names these endpoints without defining them). The body carries your Binance api_key and ' +
  'api_secret: they sign one upstream request and are never stored or logged. 200 is the exchange’s answer unchanged; ' +
  '400 with `code` and `msg` is the exchange’s refusal; 422 a missing or wrong-typed field; 502 the exchange failed or, ' +
  'for an order, its outcome is unknown (query client_order_id before placing again).'

/**
 * The body-credential trading endpoints (spec Authentication, pattern 3): public and unsigned, the
 * public family's FastAPI-style errors and per-IP budget, each one signed upstream call (two for a
 * position close: the position is read first).
 */
export const tradingRoutes: FastifyPluginAsync<TradingDeps> = async (fastify, deps) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const config = { access: { kind: 'public' as const } }
  const tags = ['trading']
  const response = { 200: ExchangeAnswerSchema, 400: ExchangeRejectionSchema, 422: ValidationErrorSchema, 502: ExchangeFailureSchema }

  const route = <B extends TSchema>(path: string, summary: string, body: B, handler: (deps: TradingDeps, body: never) => Promise<TradingResult>) => {
    app.post(path, { config, schema: { tags, summary, description: ADDITION, body, response } }, async (request, reply) =>
      send(reply, await handler(deps, request.body as never)),
    )
  }

  route('/orders/auth', 'Place a MARKET or LIMIT order with your Binance key', PlaceOrderSchema, trading.placeOrder)
  route('/orders/cancel/auth', 'Cancel an order by order_id or client_order_id', CancelOrderSchema, trading.cancelOrder)
  route('/orders/query/auth', 'Read one order by order_id or client_order_id', CancelOrderSchema, trading.queryOrder)
  route('/orders/open/auth', 'Open orders, of one symbol or all', OptionalSymbolBodySchema, trading.openOrders)
  route('/positions/auth', 'Positions (GET /fapi/v2/positionRisk), of one symbol or all', OptionalSymbolBodySchema, trading.positions)
  route('/positions/close/auth', "Close the symbol's one-way position with a reduce-only MARKET order", SymbolBodySchema, trading.closePosition)
  route('/leverage/auth', "Set the symbol's leverage (1 to 125)", LeverageSchema, trading.setLeverage)
  route('/margin-type/auth', "Set the symbol's margin type (ISOLATED or CROSSED)", MarginTypeSchema, trading.setMarginType)
  route('/balance/auth', 'Futures wallet balances (GET /fapi/v2/balance)', CredentialsBodySchema, trading.balances)
}

function send(reply: FastifyReply, result: TradingResult) {
  switch (result.kind) {
    case 'ok':
      return reply.code(200).send(result.value)
    case 'rejected':
      return reply.code(400).send({ detail: result.msg, code: result.code, msg: result.msg })
    case 'invalid':
      return reply.code(400).send({ detail: result.detail })
    case 'failed':
      return reply.code(502).send({ detail: result.detail, ...(result.clientOrderId ? { client_order_id: result.clientOrderId } : {}) })
  }
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import { fundingHistory, fundingRate, fundingRatesJson } from './funding.js'
import { accountRatios, positionRatios, RATIO_DEFAULTS } from './long-short.js'
import { sendJsonText, sendJsonTextSoon } from './json-reply.js'
import type { MarketData } from './market-data.js'
import {
  AccountRatioRowSchema,
  ActiveTickerQuerySchema,
  DetailSchema,
  FundingHistoryQuerySchema,
  FundingHistoryRowSchema,
  FundingRateSchema,
  NoQuerySchema,
  PositionRatioRowSchema,
  RatioPathQuerySchema,
  SymbolPathSchema,
  symbolOf,
  TickerRowSchema,
  ValidationErrorSchema,
} from './schemas.js'
import { smartMoneyOverview } from './smart-money.js'
import { parseTimeRange, smartMoneyList } from './smart-money-list.js'
import {
  SmartMoneyListQuerySchema,
  SmartMoneyListSchema,
  SmartMoneyOverviewQuerySchema,
  SmartMoneyOverviewSchema,
  WhaleBoardQuerySchema,
  WhaleBoardSchema,
} from './smart-money-schemas.js'
import { activeTickersJson } from './tickers.js'
import { whaleBoard } from './whale-board.js'

export interface MarketRoutesOptions {
  market: MarketData
  now: () => number
}

const config = { access: { kind: 'public' as const } }
const tags = ['market data']
const errors = { 422: ValidationErrorSchema, 502: DetailSchema }
const symbolErrors = { 400: DetailSchema, ...errors }

/** The public gateway endpoints (spec "Gateway market-data endpoints"): our own views of the exchange's data. */
export const gatewayRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (fastify, { market, now }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/funding/rates',
    {
      config,
      schema: {
        tags,
        summary: 'The current funding rate of every perpetual symbol',
        querystring: NoQuerySchema,
        response: { 200: Type.Array(FundingRateSchema), ...errors },
      },
    },
    (_request, reply) => sendJsonTextSoon(reply, fundingRatesJson(market.session())),
  )

  app.get(
    '/funding/rates/:symbol',
    {
      config,
      schema: {
        tags,
        summary: 'The current funding rate of one symbol; 400 for an unknown symbol, 404 for one without funding (delivery contracts)',
        params: SymbolPathSchema,
        querystring: NoQuerySchema,
        response: { 200: FundingRateSchema, 404: DetailSchema, ...symbolErrors },
      },
    },
    async (request) => fundingRate(market.session(), symbolOf(request.params.symbol)),
  )

  app.get(
    '/funding/rates/:symbol/history',
    {
      config,
      schema: {
        tags,
        summary: 'Funding history of one symbol, oldest first',
        params: SymbolPathSchema,
        querystring: FundingHistoryQuerySchema,
        response: { 200: Type.Array(FundingHistoryRowSchema), ...symbolErrors },
      },
    },
    async (request) => fundingHistory(market.session(), symbolOf(request.params.symbol), request.query),
  )

  app.get(
    '/ticker/24hr/active',
    {
      config,
      schema: {
        tags,
        summary: 'Tickers with quoteVolume >= min_quote_volume, by quoteVolume descending; USDC-quoted symbols excluded',
        querystring: ActiveTickerQuerySchema,
        response: { 200: Type.Array(TickerRowSchema), ...errors },
      },
    },
    async (request, reply) => sendJsonText(reply, await activeTickersJson(market.session(), request.query.min_quote_volume ?? 100_000_000)),
  )

  app.get(
    '/long-short/position-ratio/:symbol',
    {
      config,
      schema: {
        tags,
        summary: 'Top traders’ long/short ratio by position size, oldest first',
        params: SymbolPathSchema,
        querystring: RatioPathQuerySchema,
        response: { 200: Type.Array(PositionRatioRowSchema), ...symbolErrors },
      },
    },
    async (request) =>
      positionRatios(market.session(), symbolOf(request.params.symbol), request.query.period ?? RATIO_DEFAULTS.period, request.query.limit ?? RATIO_DEFAULTS.limit),
  )

  app.get(
    '/long-short/account-ratio/:symbol',
    {
      config,
      schema: {
        tags,
        summary: 'Top traders’ long/short ratio by account count, oldest first',
        params: SymbolPathSchema,
        querystring: RatioPathQuerySchema,
        response: { 200: Type.Array(AccountRatioRowSchema), ...symbolErrors },
      },
    },
    async (request) =>
      accountRatios(market.session(), symbolOf(request.params.symbol), request.query.period ?? RATIO_DEFAULTS.period, request.query.limit ?? RATIO_DEFAULTS.limit),
  )

  app.get(
    '/smart-money/signal/overview',
    {
      config,
      schema: {
        tags,
        summary: 'Top-trader head-count, positioning, whale trades and a signal for one symbol',
        querystring: SmartMoneyOverviewQuerySchema,
        response: { 200: SmartMoneyOverviewSchema, 404: DetailSchema, ...symbolErrors },
      },
    },
    async (request) => smartMoneyOverview(market.session(), symbolOf(request.query.symbol)),
  )

  app.get(
    '/smart-money/signal/list',
    {
      config,
      schema: {
        tags,
        summary: 'Large holders’ net position and long/short flow over a time range, ranked',
        querystring: SmartMoneyListQuerySchema,
        response: { 200: SmartMoneyListSchema, ...symbolErrors },
      },
    },
    async (request) => smartMoneyList(market.session(), parseTimeRange(request.query.timeRange), now()),
  )

  app.get(
    '/whale-board',
    {
      config,
      schema: {
        tags,
        summary: 'Where the whales lean hardest in liquid markets, by score descending',
        querystring: WhaleBoardQuerySchema,
        response: { 200: WhaleBoardSchema, ...errors },
      },
    },
    async (request) => whaleBoard(market.session(), request.query.min_quote_volume ?? 50_000_000, now()),
  )
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { MarketRoutesOptions } from '../gateway-routes.js'
import { symbolOf } from '../schemas.js'
import { type RatioSeries, upstream } from '../upstream-requests.js'
import { forward, sendForwarded } from './forward.js'
import { ADDITION, additionTags as tags, mirrorConfig as config, mirrorErrors as errors } from './mirror-route-options.js'
import { ExchangeRowsSchema, FuturesDataQuerySchema } from './schemas.js'

/** Binance's default number of points of a /futures/data series. */
const DEFAULT_POINTS = 30

const SERIES: Record<RatioSeries, string> = {
  openInterestHist: 'Open interest history (sumOpenInterest, sumOpenInterestValue)',
  topLongShortAccountRatio: 'Top traders’ long/short ratio by accounts',
  topLongShortPositionRatio: 'Top traders’ long/short ratio by positions',
  globalLongShortAccountRatio: 'All accounts’ long/short ratio',
  takerlongshortRatio: 'Taker buy/sell volume ratio',
}

/** Binance's /futures/data statistics under their own paths, unchanged (the spec's /topLongShort* at the root keep their own defaults). */
export const futuresDataMirrorRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (fastify, { market }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  for (const [series, summary] of Object.entries(SERIES) as [RatioSeries, string][]) {
    app.get(
      `/futures/data/${series}`,
      { config, schema: { tags, summary, description: ADDITION, querystring: FuturesDataQuerySchema, response: { 200: ExchangeRowsSchema, ...errors } } },
      async (request, reply) => {
        const { symbol, period, limit = DEFAULT_POINTS, startTime, endTime } = request.query
        return sendForwarded(reply, await forward(market.session(), upstream.series(series, symbolOf(symbol), period, limit, { startTime, endTime })))
      },
    )
  }
}

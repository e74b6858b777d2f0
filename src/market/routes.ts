import type { FastifyPluginAsync } from 'fastify'
import { type MarketRoutesOptions, gatewayRoutes } from './gateway-routes.js'
import { klineRoutes } from './kline-routes.js'
import { mirrorRoutes } from './mirror/routes.js'
import { marketValidatorCompiler } from './validator.js'
import { v1MarketRoutes } from './v1-routes.js'

/** Every market-data endpoint: the mirror, the public gateway, /v1/market and the plan-gated klines. */
export const marketRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (app, options) => {
  app.setValidatorCompiler(marketValidatorCompiler)
  await app.register(mirrorRoutes, options)
  await app.register(gatewayRoutes, options)
  await app.register(v1MarketRoutes, options)
  await app.register(klineRoutes, options)
}
